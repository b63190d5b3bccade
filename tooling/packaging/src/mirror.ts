import { createHash } from "node:crypto";
import { access, mkdir, readFile, realpath, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { execa } from "execa";
import type { Manifest, WorkspacePackage } from "./workspace.ts";

// The third-party packages the published packages need at install time, taken from this
// workspace's installed node_modules (what pnpm resolved from the lockfile) and made into
// tarballs, so a registry with no uplinks can serve an install of @nodekit/* end to end.
// Nothing is downloaded: a package the workspace does not have installed is not mirrored.

export interface MirroredPackage {
  name: string;
  version: string;
  manifest: Manifest;
  /** The tarball (absolute path): the installed directory as `package/…`, node_modules left out. */
  tarball: string;
  integrity: string;
  shasum: string;
}

interface Found {
  name: string;
  version: string;
  dir: string;
  manifest: Manifest;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Where Node would find `name` from inside `dir`: the nearest node_modules/name above it. */
async function locate(dir: string, name: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    if (basename(at) !== "node_modules") {
      const candidate = join(at, "node_modules", name);
      if (await exists(join(candidate, "package.json"))) return realpath(candidate);
    }
    if (dirname(at) === at) return undefined;
  }
}

function runtimeDependencies(manifest: Manifest): string[] {
  return [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.optionalDependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ];
}

/**
 * Every third-party package (name@version) an install of `packages` pulls in, found from each
 * package's own directory as Node's resolution finds it; the workspace's own packages
 * (`workspace:` ranges) are left out. An optional or peer dependency that is not installed is
 * skipped, as npm skips an optional one it cannot get.
 */
export async function thirdPartyClosure(packages: readonly WorkspacePackage[]): Promise<Found[]> {
  const own = new Set(packages.map((pkg) => pkg.manifest.name));
  const found = new Map<string, Found>();
  const queue: Array<{ from: string; name: string }> = [];
  for (const pkg of packages) {
    for (const name of runtimeDependencies(pkg.manifest)) if (!own.has(name)) queue.push({ from: pkg.dir, name });
  }
  const visited = new Set<string>();
  while (queue.length > 0) {
    const next = queue.pop();
    if (next === undefined) break;
    const dir = await locate(next.from, next.name);
    if (dir === undefined || visited.has(dir)) continue;
    visited.add(dir);
    const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as Manifest;
    const key = `${manifest.name}@${manifest.version}`;
    if (!found.has(key)) found.set(key, { name: manifest.name, version: manifest.version, dir, manifest });
    for (const name of runtimeDependencies(manifest)) if (!own.has(name)) queue.push({ from: dir, name });
  }
  return [...found.values()].sort((a, b) => `${a.name}@${a.version}`.localeCompare(`${b.name}@${b.version}`));
}

/** The tarball's file name as a registry names it: `name-version.tgz`, without the scope. */
export function tarballName(name: string, version: string): string {
  return `${name.split("/").pop()}-${version}.tgz`;
}

/**
 * Tarballs for the closure, made once per name@version in `cacheDir` (an installed package of
 * one version has one content) and reused by later runs.
 */
export async function mirrorTarballs(found: readonly Found[], cacheDir: string): Promise<MirroredPackage[]> {
  await mkdir(cacheDir, { recursive: true });
  const out: MirroredPackage[] = [];
  for (const pkg of found) {
    const file = join(cacheDir, `${pkg.name.replace("/", "+")}-${pkg.version}.tgz`);
    if (!(await exists(file))) {
      const tmp = `${file}.${process.pid}.tmp`;
      // GNU tar: pnpm's store hard-links files of equal content, and a registry's tarball holds
      // each file in full (--hard-dereference), owned by nobody in particular, in name order.
      await execa("tar", [
        "--create",
        "--gzip",
        `--file=${tmp}`,
        `--directory=${pkg.dir}`,
        "--exclude=./node_modules",
        "--hard-dereference",
        "--owner=0",
        "--group=0",
        "--numeric-owner",
        "--sort=name",
        "--transform=s,^\\.,package,",
        ".",
      ]);
      await rename(tmp, file).catch(async (error) => {
        await rm(tmp, { force: true });
        throw error;
      });
    }
    const bytes = await readFile(file);
    out.push({
      name: pkg.name,
      version: pkg.version,
      manifest: pkg.manifest,
      tarball: file,
      integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
      shasum: createHash("sha1").update(bytes).digest("hex"),
    });
  }
  return out;
}
