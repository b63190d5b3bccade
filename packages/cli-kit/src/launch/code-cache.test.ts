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
import { crc32 } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it, onTestFinished } from "vitest";
import { codeCacheDir, codeCacheName } from "./code-cache.ts";

const codeCache = join(import.meta.dirname, "code-cache.ts");

/** The cache file's header (code-cache.ts): this magic, then the payload's CRC-32, little-endian. */
const MAGIC = "nodekit-code-cache-1";
const framed = (payload: Buffer) => {
  const header = Buffer.alloc(MAGIC.length + 4);
  header.write(MAGIC, 0, "latin1");
  header.writeUInt32LE(crc32(payload), MAGIC.length);
  return Buffer.concat([header, payload]);
};

/** How many damaged caches the fuzz test runs through (a process each). */
const CORRUPTIONS = 60;

/** One way a cache file gets damaged (a disk, a torn write, another program), as a function of the good file. */
const damage: fc.Arbitrary<(good: Buffer) => Buffer> = fc.oneof(
  // Bytes flipped anywhere: the header, V8's own header, the code.
  fc
    .array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 255 })), {
      minLength: 1,
      maxLength: 8,
    })
    .map((flips) => (good: Buffer) => {
      const bad = Buffer.from(good);
      for (const [at, mask] of flips) {
        const index = Math.min(bad.length - 1, Math.floor(at * bad.length));
        bad[index] = (bad[index] ?? 0) ^ mask;
      }
      return bad;
    }),
  // Cut short (a torn write), to nothing at the least.
  fc
    .double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
    .map((at) => (good: Buffer) => good.subarray(0, Math.floor(at * good.length))),
  // The payload replaced by random bytes of the same length, behind the good header.
  fc.integer().map((seed) => (good: Buffer) => {
    const bad = Buffer.from(good);
    let state = seed >>> 0;
    for (let index = MAGIC.length + 4; index < bad.length; index++) {
      state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
      bad[index] = state >>> 24;
    }
    return bad;
  }),
  // A run of zeros (a block the file system lost).
  fc
    .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 4096 }))
    .map(([at, length]) => (good: Buffer) => {
      const bad = Buffer.from(good);
      const start = Math.floor(at * bad.length);
      bad.fill(0, start, Math.min(bad.length, start + length));
      return bad;
    }),
  // Grown: bytes appended.
  fc.uint8Array({ minLength: 1, maxLength: 512 }).map((more) => (good: Buffer) => Buffer.concat([good, more])),
);

/** A process id no process has: one that just exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

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
// A run that does not finish: killed (as a crash in V8 would end it), no exit handler runs.
if (exitCode === "kill") process.kill(process.pid, "SIGKILL");
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
  const run = (exitCode: number | "kill" = 0, env: NodeJS.ProcessEnv = {}) => {
    const result = spawnSync(
      process.execPath,
      [dir.path("runner.mjs"), dir.path("dist/hot-ABCD1234.js"), cacheDir, name, String(exitCode)],
      { encoding: "utf8", env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: "", ...env } },
    );
    if (exitCode === "kill") expect(result.signal, result.stderr).toBe("SIGKILL");
    else
      expect({ status: result.status, signal: result.signal }, result.stderr).toEqual({
        status: exitCode,
        signal: null,
      });
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
    // A cache V8 made for another source: its checksum holds, V8 refuses it (the source's length differs).
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${HOT}// another build\n})`;
    writeFileSync(cacheFile, framed(new Script(wrapped).createCachedData()), { mode: 0o600 });
    expect(run().state).toBe("rejected");
    expect(run().state).toBe("accepted");
    expect(readdirSync(cacheDir).filter((file) => file.endsWith(".tmp"))).toEqual([]);
  });

  it("carries a CRC-32 of V8's payload, checked before V8 reads it", async () => {
    const { cacheFile, run } = await fixture();
    run();
    const file = readFileSync(cacheFile);
    expect(file.subarray(0, MAGIC.length).toString("latin1")).toBe(MAGIC);
    expect(file.readUInt32LE(MAGIC.length)).toBe(crc32(file.subarray(MAGIC.length + 4)));
  });

  // Issue 22 item 7: 45 of 210 damaged caches crashed the command (SIGSEGV, SIGTRAP, abort),
  // and none was ever rewritten. Every damage here is found before V8 sees the payload.
  it(`survives ${CORRUPTIONS} damaged caches (bytes flipped, cut short, replaced, zeroed, grown): each run succeeds, drops it, writes a good one`, async () => {
    const { cacheFile, run } = await fixture();
    run();
    const damages = fc.sample(damage, { numRuns: CORRUPTIONS, seed: 22 });
    const states = new Map<string, number>();
    for (const [index, hurt] of damages.entries()) {
      const good = readFileSync(cacheFile);
      const bad = hurt(good);
      if (bad.equals(good)) continue;
      writeFileSync(cacheFile, bad, { mode: 0o600 });
      const result = run();
      expect(result, `damage ${index}`).toEqual({ state: "dropped", value: 48, same: true, later: "loaded" });
      states.set(result.state, (states.get(result.state) ?? 0) + 1);
      // Written again by the run that dropped it, with a checksum that holds.
      const rewritten = readFileSync(cacheFile);
      expect(rewritten.readUInt32LE(MAGIC.length), `damage ${index}`).toBe(crc32(rewritten.subarray(MAGIC.length + 4)));
    }
    expect(states.get("dropped")).toBeGreaterThan(CORRUPTIONS * 0.9);
    expect(run().state).toBe("accepted");
  }, 120_000);

  it("is dropped when a run with it did not finish, and written again by the next run that does", async () => {
    const { cacheDir, cacheFile, name, run } = await fixture();
    run();
    expect(run("kill").state).toBe("accepted");
    // The killed run's marker says it never finished.
    expect(readdirSync(cacheDir).filter((file) => file.endsWith(".run"))).toHaveLength(1);
    expect(run().state).toBe("dropped");
    expect(readdirSync(cacheDir).filter((file) => file.endsWith(".run"))).toEqual([]);
    expect(existsSync(cacheFile)).toBe(true);
    expect(run().state).toBe("accepted");
    // A run that ends with an error finished: its cache stays.
    expect(run(3).state).toBe("accepted");
    expect(run().state).toBe("accepted");
    // The marker of a run going on at the same time (this process) is not a run that did not finish.
    const live = join(cacheDir, `.${name}.${process.pid}.run`);
    writeFileSync(live, "", { mode: 0o600 });
    expect(run().state).toBe("accepted");
    expect(existsSync(live)).toBe(true);
    // What killed writers left (a marker, a temporary file) goes with the next write.
    const dead = deadPid();
    writeFileSync(join(cacheDir, `.${name}.${dead}.tmp`), "partial", { mode: 0o600 });
    rmSync(cacheFile);
    expect(run().state).toBe("none");
    expect(readdirSync(cacheDir).filter((file) => file.startsWith("."))).toEqual([`.${name}.${process.pid}.run`]);
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

  it("is neither read nor written below a directory others can write to", async () => {
    const { dir, cacheDir, cacheFile, run } = await fixture();
    run();
    // Another user could rename the cache directory away and put one of theirs in its place.
    chmodSync(dir.path("cache/cli"), 0o777);
    expect(run().state).toBe("none");
    spawnSync("rm", [cacheFile]);
    run();
    expect(existsSync(cacheFile)).toBe(false);
    // Sticky (as /tmp is): others cannot rename what is not theirs.
    chmodSync(dir.path("cache/cli"), 0o1777);
    run();
    expect(run().state).toBe("accepted");
    expect(readdirSync(cacheDir).filter((file) => file.endsWith(".bin"))).toHaveLength(1);
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
    expect(run().state).toBe("dropped");
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

// Issue 22 item 1: module.enableCompileCache() without a directory puts Node's compile cache in
// $TMPDIR/node-compile-cache, which another user can create first and fill with code.
describe("Node's compile cache", () => {
  // Turns the cache on, loads a module (Node writes its cache at exit), says what it got.
  const ENABLE = `import { createRequire } from "node:module";
import { enableCompileCacheIn } from ${JSON.stringify(codeCache)};
const state = enableCompileCacheIn(process.argv[2] === "-" ? undefined : process.argv[2]);
createRequire(import.meta.url)(process.argv[3]);
process.stdout.write(JSON.stringify(state));
`;

  function setup() {
    const root = mkdtempSync(join(tmpdir(), "compile-cache-"));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const path = (relative: string) => join(root, relative);
    mkdirSync(path("tmp"));
    writeFileSync(path("enable.mjs"), ENABLE);
    writeFileSync(path("module.cjs"), "module.exports = () => 'a module Node compiles';\n");
    const enable = (dir: string | undefined, env: NodeJS.ProcessEnv = {}) => {
      const result = spawnSync(process.execPath, [path("enable.mjs"), dir ?? "-", path("module.cjs")], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, TMPDIR: path("tmp"), ...env },
      });
      expect(result.status, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as { kind: string; directory?: string; private?: boolean; reason?: string };
    };
    /** The cache files Node wrote under `dir`. */
    const written = (dir: string) =>
      existsSync(dir) ? readdirSync(dir, { recursive: true }).filter((entry) => String(entry).includes("/")) : [];
    return { path, enable, written };
  }

  it("is kept in the CLI's own private cache directory, created 0700; never under $TMPDIR", () => {
    const { path, enable, written } = setup();
    const dir = path("home/.cache/cli/code-cache");
    expect(enable(dir)).toEqual({ kind: "enabled", directory: dir });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(written(dir).length).toBeGreaterThan(0);
    expect(readdirSync(path("tmp"))).toEqual([]);
    expect(enable(undefined)).toEqual({ kind: "off", reason: "no cache directory" });
    expect(readdirSync(path("tmp"))).toEqual([]);
  });

  it("is off in a directory others can enter or below one others can write to, and when turned off", () => {
    const { path, enable, written } = setup();
    const open = path("open/code-cache");
    mkdirSync(open, { recursive: true, mode: 0o755 });
    chmodSync(open, 0o755);
    expect(enable(open)).toEqual({ kind: "off", reason: `${open} is not private` });
    const below = path("shared/cli/code-cache");
    mkdirSync(below, { recursive: true, mode: 0o700 });
    chmodSync(path("shared"), 0o777);
    expect(enable(below)).toEqual({ kind: "off", reason: `${below} is not private` });
    expect([...written(open), ...written(below)]).toEqual([]);
    const mine = path("mine/code-cache");
    expect(enable(mine, { NODE_DISABLE_COMPILE_CACHE: "1" })).toEqual({
      kind: "off",
      reason: "NODE_DISABLE_COMPILE_CACHE=1",
    });
    expect(written(mine)).toEqual([]);
    expect(readdirSync(path("tmp"))).toEqual([]);
  });

  it("set by NODE_COMPILE_CACHE stays Node's, and the answer says whether it is private", () => {
    const { path, enable } = setup();
    const shared = path("tmp/shared-cache");
    mkdirSync(shared, { mode: 0o777 });
    chmodSync(shared, 0o777);
    const theirs = enable(path("mine"), { NODE_COMPILE_CACHE: shared });
    expect(theirs).toMatchObject({ kind: "environment", private: false });
    expect(theirs.directory?.startsWith(`${shared}/`)).toBe(true);
    const own = path("own-cache");
    expect(enable(path("mine"), { NODE_COMPILE_CACHE: own })).toMatchObject({ kind: "environment", private: true });
    expect(existsSync(path("mine"))).toBe(false);
  });
});
