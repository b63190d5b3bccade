#!/usr/bin/env node
import module from "node:module";

if (Number(process.versions.node.split(".")[0]) < 22) {
  process.stderr.write(
    `error: this CLI needs Node.js 22 or newer; this is ${process.version}\nnext: install Node.js 22 LTS or newer and run it again\n`,
  );
  process.exit(9);
}
// The check above is the engine check; oclif's own would load semver (47 modules) on every start.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= "1";
// Node's compile cache keeps start-up fast from the second run on (oclif CLIs are known to start slowly).
module.enableCompileCache?.();
// The build bundles oclif with the commands (tsup.config.ts); dist/run.js is its entry.
const { run } = await import("../dist/run.js");
await run(import.meta.url);
