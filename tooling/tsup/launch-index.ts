// Writes a CLI's launch index (dist/launch-index.json) from the oclif manifest the build just
// wrote: each command's id, aliases, path and flags, without the help texts. The launcher
// reads it on every start instead of the ≈ 130 KB manifest (packages/cli-kit/src/launch/shipped.ts);
// help still reads the manifest. It also names the bundle's hot file (tooling/tsup/hot-chunk.ts),
// which the launcher loads with its code cache (packages/cli-kit/src/launch/code-cache.ts), and
// says that the help pages are written (tooling/tsup/help-pages.ts): rendered by the built CLI
// from the index without them, then the index written again with them.
// Run from the CLI's directory, after `oclif manifest`.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { HelpPages } from "../../packages/cli-kit/src/launch/help-page.ts";
import { LAUNCH_INDEX, launchIndexOf } from "../../packages/cli-kit/src/launch/shipped.ts";
import { writeHelpPages } from "./help-pages.ts";

const dir = process.cwd();
const manifestPath = join(dir, "oclif.manifest.json");
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
// `oclif manifest` lists the commands in the order its directory walk (tinyglobby) found their
// files, which changes from build to build; oclif sorts them when it loads the manifest. In
// sorted order here, so that the same sources build the same manifest, launch index and
// help-page build id (and so the same single executables: tooling/packaging/src/sea.ts).
manifest.commands = Object.fromEntries(
  Object.keys(manifest.commands)
    .sort()
    .map((id) => [id, manifest.commands[id]]),
);
writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
const hot = readdirSync(join(dir, "dist")).filter((file) => /^hot-[\w-]+\.js$/.test(file));
if (hot.length > 1) throw new Error(`launch-index: more than one hot file in dist/: ${hot.join(", ")}`);
const write = (help?: HelpPages) =>
  writeFileSync(
    join(dir, LAUNCH_INDEX),
    `${JSON.stringify(launchIndexOf(manifest, hot[0] === undefined ? undefined : `dist/${hot[0]}`, help))}\n`,
  );
write();
write(writeHelpPages(dir));
