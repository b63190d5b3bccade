import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { execa } from "execa";
import type { PackedPackage } from "./pack.ts";

// Publishing packed tarballs with npm itself (`npm publish <tarball>`), the client a registry
// expects; the npm is this package's own (a devDependency), run by the Node.js that runs this.

/** npm's CLI script from this package's dependencies. */
export const NPM_CLI = join(dirname(createRequire(import.meta.url).resolve("npm/package.json")), "bin", "npm-cli.js");

export interface PublishOptions {
  /** The registry's URL; npm's configured one when absent. */
  registry?: string;
  /** The environment npm runs in (its user config, HOME, cache); this process's when absent. */
  env?: NodeJS.ProcessEnv;
  /** The dist-tag (npm's default, latest, when absent). */
  tag?: string;
}

/** Publishes each tarball, four at a time; fails naming the first npm refused. */
export async function publishTarballs(packed: readonly PackedPackage[], options: PublishOptions = {}): Promise<void> {
  const queue = [...packed];
  const worker = async () => {
    for (let pkg = queue.shift(); pkg !== undefined; pkg = queue.shift()) await publishOne(pkg, options);
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

async function publishOne(pkg: PackedPackage, options: PublishOptions): Promise<void> {
  const args = [NPM_CLI, "publish", pkg.tarball, "--access", "public", "--no-git-checks"];
  if (options.registry !== undefined) args.push("--registry", options.registry);
  if (options.tag !== undefined) args.push("--tag", options.tag);
  const result = await execa(process.execPath, args, {
    env: options.env ?? process.env,
    extendEnv: options.env === undefined,
    reject: false,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.exitCode !== 0) {
    throw new Error(`npm publish ${pkg.name}@${pkg.version} failed (exit ${result.exitCode}): ${result.stderr}`);
  }
}
