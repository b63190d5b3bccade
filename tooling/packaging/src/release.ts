import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { execa } from "execa";
import { packPackages } from "./pack.ts";
import { NPM_CLI, publishTarballs } from "./publish.ts";
import { publicPackages } from "./workspace.ts";

// `pnpm release`: one command from changesets to a registry.
//
//   1. changeset version   the pending changesets become versions and changelogs
//   2. pnpm run build       every library and both CLIs
//   3. pnpm pack            each public package, into --out (default .release/)
//   4. npm publish          each tarball whose version the registry lacks (npm's configured
//                           registry and credentials, or --registry)
//   5. changeset tag        a git tag per published version
//
// --no-version skips 1 (publish what the package.json files say), --no-build skips 2,
// --no-tag skips 5, --dry-run stops after 3. The install tier (test/install.int.test.ts) runs
// it with --no-version --no-build --no-tag against a verdaccio on 127.0.0.1.

const { values } = parseArgs({
  options: {
    registry: { type: "string" },
    tag: { type: "string" },
    out: { type: "string" },
    "no-version": { type: "boolean", default: false },
    "no-build": { type: "boolean", default: false },
    "no-tag": { type: "boolean", default: false },
    "dry-run": { type: "boolean", default: false },
  },
});

const root = resolve(import.meta.dirname, "../../..");
const out = resolve(values.out ?? join(root, ".release"));
const log = (line: string) => process.stderr.write(`release: ${line}\n`);
const step = (command: string, args: string[]) => execa(command, args, { cwd: root, stdio: "inherit" });

if (!values["no-version"]) {
  log("changeset version");
  await step(join(root, "node_modules/.bin/changeset"), ["version"]);
}
if (!values["no-build"]) {
  log("pnpm run build");
  await step("pnpm", ["run", "--silent", "build"]);
}
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
const packed = await packPackages(await publicPackages(root), out);
for (const pkg of packed) log(`packed ${pkg.name}@${pkg.version} (${pkg.tarball})`);
if (values["dry-run"]) {
  log(`dry run: nothing published; the tarballs are in ${out}`);
} else {
  const registryArgs = values.registry === undefined ? [] : ["--registry", values.registry];
  const unpublished = [];
  for (const pkg of packed) {
    const seen = await execa(
      process.execPath,
      [NPM_CLI, "view", `${pkg.name}@${pkg.version}`, "version", ...registryArgs],
      {
        reject: false,
      },
    );
    if (seen.exitCode === 0 && seen.stdout.trim() === pkg.version)
      log(`${pkg.name}@${pkg.version} is published already`);
    else unpublished.push(pkg);
  }
  await publishTarballs(unpublished, {
    ...(values.registry === undefined ? {} : { registry: values.registry }),
    ...(values.tag === undefined ? {} : { tag: values.tag }),
  });
  for (const pkg of unpublished) log(`published ${pkg.name}@${pkg.version}`);
  if (!values["no-tag"] && unpublished.length > 0) {
    log("changeset tag");
    await step(join(root, "node_modules/.bin/changeset"), ["tag"]);
  }
}
