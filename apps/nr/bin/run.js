#!/usr/bin/env node
// Every nodekit CLI's bin is these lines; the body is @nodekit/cli-kit/bin's launch()
// (the engine check, the compile cache), then the bundle's entry, dist/run.js.
import { launch } from "../dist/launch.js";

await launch(import.meta.url, () => import("../dist/run.js"));
