#!/usr/bin/env node
// Every nodekit CLI's bin is these lines; the body is @nodekit/cli-kit's launch()
// (the engine check), then the bundle's entry, dist/run.js. The bin and
// the bundle are CommonJS (bin/package.json, dist/package.json): Node loads them without
// its ES module loader, a few milliseconds less on every start (tooling/tsup/hot-chunk.ts).
const { launch } = require("../dist/launch.js");

launch(require("node:url").pathToFileURL(__filename).href, async () => require("../dist/run.js"));
