// Writes a CLI's launch index (dist/launch-index.json) from the oclif manifest the build just
// wrote: each command's id, aliases, path and flags, without the help texts. The launcher
// reads it on every start instead of the ≈ 130 KB manifest (packages/cli-kit/src/launch/shipped.ts);
// help still reads the manifest. Run from the CLI's directory, after `oclif manifest`.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LAUNCH_INDEX, launchIndexOf } from "../../packages/cli-kit/src/launch/shipped.ts";

const dir = process.cwd();
const manifest = JSON.parse(readFileSync(join(dir, "oclif.manifest.json"), "utf8"));
writeFileSync(join(dir, LAUNCH_INDEX), `${JSON.stringify(launchIndexOf(manifest))}\n`);
