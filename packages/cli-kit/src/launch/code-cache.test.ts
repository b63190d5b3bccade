import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Script } from "node:vm";
import { describe, expect, it, onTestFinished } from "vitest";
import { codeCacheDir, codeCacheName } from "./code-cache.ts";

const codeCache = join(import.meta.dirname, "code-cache.ts");

// A hot file: CommonJS, with functions V8 compiles only when they are first called, and an
// import() through the module beside it, as the build writes the hot file's imports of
// external packages (tooling/tsup/hot-chunk.ts).
const HOT = `'use strict';
globalThis.__hotExports = exports;
function sum(n) {
  let total = 0;
  for (let i = 0; i < n; i++) total += i;
  return total;
}
function describeIt(values) {
  return values.map((value) => ({ value, doubled: value * 2, text: String(value).padStart(4, "0") }));
}
exports.value = () => sum(10) + describeIt([1, 2, 3]).length;
exports.later = () => require("./dynamic-import.js")("./later.mjs");
`;

// Loads the hot file through requireWithCodeCache, then requires it again (the same module
// must come back), calls into it, and exits with the status asked for.
const RUNNER = `import { createRequire } from "node:module";
import { requireWithCodeCache } from ${JSON.stringify(codeCache)};
const [hot, dir, name, exitCode] = process.argv.slice(2);
const state = requireWithCodeCache(hot, dir, name);
const again = createRequire(import.meta.url)(hot);
const later = await again.later();
process.stdout.write(JSON.stringify({ state, value: again.value(), same: again === globalThis.__hotExports, later: later.later }));
process.exitCode = Number(exitCode ?? "0");
`;

async function fixture() {
  const root = mkdtempSync(join(tmpdir(), "code-cache-"));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const dir = { path: (relative: string) => join(root, relative) };
  mkdirSync(dir.path("dist"));
  writeFileSync(dir.path("dist/hot-ABCD1234.js"), HOT);
  writeFileSync(dir.path("dist/later.mjs"), "export const later = 'loaded';\n");
  writeFileSync(dir.path("dist/dynamic-import.js"), "module.exports = (specifier) => import(specifier);\n");
  writeFileSync(dir.path("dist/package.json"), '{ "type": "commonjs" }\n');
  writeFileSync(dir.path("runner.mjs"), RUNNER);
  const cacheDir = dir.path("cache/cli/code-cache");
  const name = codeCacheName("dist/hot-ABCD1234.js", "get:clusters");
  const run = (exitCode = 0, env: NodeJS.ProcessEnv = {}) => {
    const result = spawnSync(
      process.execPath,
      [dir.path("runner.mjs"), dir.path("dist/hot-ABCD1234.js"), cacheDir, name, String(exitCode)],
      { encoding: "utf8", env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: "", ...env } },
    );
    expect(result.status, result.stderr).toBe(exitCode);
    return JSON.parse(result.stdout) as { state: string; value: number; same: boolean; later: string };
  };
  return { dir, cacheDir, name, cacheFile: join(cacheDir, name), run };
}

describe("the hot file's code cache, made after the code ran", () => {
  it("is written by a run that exits 0 (0600 in a 0700 directory) and compiles the next run, same module", async () => {
    const { cacheDir, cacheFile, run } = await fixture();
    expect(run()).toEqual({ state: "none", value: 48, same: true, later: "loaded" });
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
    const written = readFileSync(cacheFile);
    expect(run()).toEqual({ state: "accepted", value: 48, same: true, later: "loaded" });
    // An accepted cache is not written again.
    expect(readFileSync(cacheFile).equals(written)).toBe(true);
    // It holds the functions that ran: larger than the cache V8 makes when it compiles the file.
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${HOT}\n})`;
    expect(written.length).toBeGreaterThan(new Script(wrapped).createCachedData().length);
  });

  it("is not written by a run that fails", async () => {
    const { cacheFile, run } = await fixture();
    expect(run(1).state).toBe("none");
    expect(existsSync(cacheFile)).toBe(false);
  });

  it("is written again when V8 rejects it", async () => {
    const { cacheDir, cacheFile, run } = await fixture();
    run();
    writeFileSync(cacheFile, Buffer.alloc(4096, 7), { mode: 0o600 });
    expect(run().state).toBe("rejected");
    expect(run().state).toBe("accepted");
    expect(readdirSync(cacheDir).filter((file) => file.endsWith(".tmp"))).toEqual([]);
  });

  it("is read only from a file no one else can write, never through a symbolic link", async () => {
    const { dir, cacheFile, run } = await fixture();
    run();
    chmodSync(cacheFile, 0o620);
    expect(run().state).toBe("none");
    // Written again in its place, the user's own.
    expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
    const elsewhere = dir.path("elsewhere.bin");
    writeFileSync(elsewhere, readFileSync(cacheFile), { mode: 0o600 });
    spawnSync("rm", [cacheFile]);
    symlinkSync(elsewhere, cacheFile);
    expect(run(1).state).toBe("none");
  });

  it("is neither read nor written in a directory others can enter", async () => {
    const { cacheDir, cacheFile, run } = await fixture();
    run();
    chmodSync(cacheDir, 0o755);
    expect(run().state).toBe("none");
    spawnSync("rm", [cacheFile]);
    run();
    expect(existsSync(cacheFile)).toBe(false);
  });

  it("keeps other commands' caches and the two other builds' written last when it writes, removes older builds'", async () => {
    const { cacheDir, name, run } = await fixture();
    run();
    const otherCommand = name.replace("get_clusters", "help");
    const builds = ["OLD00001", "OLD00002", "OLD00003"].map((hash) =>
      codeCacheName(`dist/hot-${hash}.js`, "get:clusters"),
    );
    const otherNode = name.replace(process.version, "v22.0.0");
    const files = [otherCommand, ...builds, otherNode];
    files.forEach((file, n) => {
      writeFileSync(join(cacheDir, file), "x", { mode: 0o600 });
      // Written in this order, a minute apart: the Node.js one last, the first old build first.
      utimesSync(join(cacheDir, file), new Date(), new Date(Date.now() - (files.length - n) * 60_000));
    });
    writeFileSync(join(cacheDir, name), "stale", { mode: 0o600 });
    expect(run().state).toBe("rejected");
    expect(readdirSync(cacheDir).sort()).toEqual([name, otherCommand, builds[2], otherNode].sort());
  });

  it("is off with NODE_DISABLE_COMPILE_CACHE=1, as Node's own compile cache is", async () => {
    const { cacheFile, run } = await fixture();
    expect(run(0, { NODE_DISABLE_COMPILE_CACHE: "1" })).toEqual({
      state: "off",
      value: 48,
      same: true,
      later: "loaded",
    });
    expect(existsSync(cacheFile)).toBe(false);
  });

  it("lives in the XDG cache directory (an absolute one), else ~/.cache; its name says build, Node.js and command", () => {
    expect(codeCacheDir("nvkectl", { XDG_CACHE_HOME: "/c", HOME: "/h" })).toBe("/c/nvkectl/code-cache");
    expect(codeCacheDir("nvkectl", { XDG_CACHE_HOME: "relative", HOME: "/h" })).toBe("/h/.cache/nvkectl/code-cache");
    expect(codeCacheDir("nvkectl", {})).toBeUndefined();
    expect(codeCacheName("dist/hot-D54Qgvi4.js", "get:clusters")).toBe(
      `hot-D54Qgvi4.${process.version}-${process.arch}.get_clusters.bin`,
    );
  });
});
