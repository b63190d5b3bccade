// Writes a CLI's launch index (dist/launch-index.json) from the oclif manifest the build just
// wrote: each command's id, aliases, path and flags, without the help texts. The launcher
// reads it on every start instead of the ≈ 130 KB manifest (packages/cli-kit/src/launch/shipped.ts);
// help still reads the manifest. It also names the bundle's hot file (tooling/tsup/hot-chunk.ts),
// which the launcher loads with its code cache (packages/cli-kit/src/launch/code-cache.ts).
// Run from the CLI's directory, after `oclif manifest`.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LAUNCH_INDEX, launchIndexOf } from "../../packages/cli-kit/src/launch/shipped.ts";

const dir = process.cwd();
const manifest = JSON.parse(readFileSync(join(dir, "oclif.manifest.json"), "utf8"));
const hot = readdirSync(join(dir, "dist")).filter((file) => /^hot-[\w-]+\.js$/.test(file));
if (hot.length > 1) throw new Error(`launch-index: more than one hot file in dist/: ${hot.join(", ")}`);
const index = launchIndexOf(manifest, hot[0] === undefined ? undefined : `dist/${hot[0]}`);
writeFileSync(join(dir, LAUNCH_INDEX), `${JSON.stringify(index)}\n`);
