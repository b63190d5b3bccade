import { dirname, isAbsolute, join } from "node:path";

// Node's compile cache keeps what V8 compiled when it loaded a file: the top-level code and
// the functions V8 compiles at once. Every other function is compiled on its first call, in
// every process: for a cached `nvkectl get clusters -o json` that is most of the code it runs
// (oclif's command and parser, the controller client, the config and token reads), ≈ 15 % of
// its CPU time. A code cache made *after* the code ran holds those functions too, and only
// those: V8's `script.createCachedData()` called at exit. (Compiling everything eagerly, the
// other way, makes a cache three times larger that costs as much to read as it saves.)
//
// So the launcher loads the bundle's hot file (tooling/tsup/hot-chunk.ts) itself, as `require`
// would, compiled with the cache an earlier run of the same command wrote at its exit. One
// cache per command (what runs differs), per build of the hot file (its name carries its
// content hash) and per Node.js version: `<cache dir>/<hot file>.<node version>-<arch>.<key>.bin`.
// A cache is written when there was none or V8 rejected it, and only after a run that exited 0;
// a write removes the caches of all but the two other builds written last.
//
// It is code, so it is read only from a directory of the user's own that no one else can
// enter or write, below directories no one else can change (no symbolic link is followed
// for the directory or the file), and written atomically, 0600 in a 0700 directory. V8
// checks no more of a cache than the length of the source it was made from, and a damaged
// one can crash the process (SIGSEGV, SIGTRAP, abort) rather than be refused, so each file
// carries a CRC-32 of V8's payload, checked before V8 sees a byte of it; a file that fails
// the check is removed. And a run that loaded a cache leaves a marker for as long as it runs
// (`.<cache file>.<pid>.run`, removed at exit whatever the exit code): a marker whose process
// is gone means a run with that cache did not finish (a crash, a kill), so the next start
// removes the cache and compiles from source, and its successful end writes a new one.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's own. The hot file has no
// import() of its own (in a script compiled through node:vm that would need a loader Node
// calls experimental): the build routes each through dist/dynamic-import.js (tooling/tsup/hot-chunk.ts).
//
// Node's own compile cache (the files outside the hot one) is kept in the same directory,
// and only when it passes the same checks (enableCompileCacheIn). Called without a
// directory, Node would use $TMPDIR/node-compile-cache, which any user can create first and
// fill with code that runs in every CLI started after (issue 22, item 1).

/** What became of the cache when the hot file was loaded. */
export type CodeCacheState =
  /** Compiled with the cache of an earlier run. */
  | "accepted"
  /** V8 refused the cache (another V8 or other flags): it is written again at exit. */
  | "rejected"
  /** The cache failed its check (damaged, or a run with it did not finish): removed, written again at exit. */
  | "dropped"
  /** No cache yet (or one that is not the user's own): one is written at exit. */
  | "none"
  /** The hot file was loaded already, or the cache is off: nothing was done. */
  | "off";

/** Where a CLI keeps its code caches: `$XDG_CACHE_HOME/<dirname>/code-cache`, else `~/.cache/<dirname>/code-cache`. */
export function codeCacheDir(dirname: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  const home = env.HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, dirname, "code-cache");
  return home && isAbsolute(home) ? join(home, ".cache", dirname, "code-cache") : undefined;
}

/** The cache file's name for one hot file, this Node.js and one kind of start (a command's id, "help"). */
export function codeCacheName(hotFile: string, key: string): string {
  const hot = hotFile.replace(/^.*[\\/]/, "").replace(/\.js$/, "");
  return `${hot}.${process.version}-${process.arch}.${key.replace(/[^A-Za-z0-9_-]/g, "_")}.bin`;
}

/** How many other builds' (or Node.js versions') caches a write leaves in place, the latest written. */
const KEPT_BUILDS = 2;

/** The part of every cache name that says which hot file and Node.js made it (the rest is the key). */
const buildOf = (name: string) => name.split(".").slice(0, -2).join(".");

/** A cache file: this magic, the payload's CRC-32 (4 bytes, little-endian), then V8's payload. */
const MAGIC = "nodekit-code-cache-1";
const HEADER = MAGIC.length + 4;

/** What Node's compile cache became: its directory, or why it is off. */
export type CompileCacheState =
  | { kind: "enabled"; directory: string }
  /** NODE_COMPILE_CACHE named it before the CLI started; `private` says whether it passes the checks. */
  | { kind: "environment"; directory: string; private: boolean }
  | { kind: "off"; reason: string };

/**
 * Turns on Node's compile cache for the modules loaded from here on, in `dir` (the code
 * cache's directory), created 0700 when missing, and only when it is the user's own and
 * private below directories no one else can change: never in Node's default, a directory
 * under $TMPDIR that another user may have made. When NODE_COMPILE_CACHE has turned it on
 * already (Node does so before any of the CLI runs), that directory is Node's and stays in
 * use; the answer says whether it passes the same checks, for the caller to warn.
 */
export function enableCompileCacheIn(dir: string | undefined): CompileCacheState {
  const module = process.getBuiltinModule("node:module");
  const fs = process.getBuiltinModule("node:fs");
  const fromEnvironment = module.getCompileCacheDir?.();
  if (fromEnvironment !== undefined) {
    // Node made it (0755 with the usual umask): others may read it, and no one else may write it.
    return { kind: "environment", directory: fromEnvironment, private: privateDir(fs, fromEnvironment, 0o022) };
  }
  if (process.env.NODE_DISABLE_COMPILE_CACHE === "1") return { kind: "off", reason: "NODE_DISABLE_COMPILE_CACHE=1" };
  if (dir === undefined) return { kind: "off", reason: "no cache directory" };
  if (module.enableCompileCache === undefined) return { kind: "off", reason: "this Node.js has no compile cache" };
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return { kind: "off", reason: `${dir} cannot be created` };
  }
  if (!privateDir(fs, dir)) return { kind: "off", reason: `${dir} is not private` };
  const result = module.enableCompileCache(dir);
  return result.directory === undefined
    ? { kind: "off", reason: result.message ?? "Node.js refused it" }
    : { kind: "enabled", directory: result.directory };
}

/**
 * Loads `hotFile` (CommonJS) as `require` would, registered in `require.cache` so that every
 * later `require` of it gets this same module, compiled with `<dir>/<name>` when that is the
 * user's own and passes its check; arranges for a cache to be written at exit when there was
 * none or it was rejected or dropped. Returns "off" (and does nothing) when the module is
 * loaded already or the cache is turned off: `require` then loads the file as always.
 */
export function requireWithCodeCache(hotFile: string, dir: string | undefined, name: string): CodeCacheState {
  if (dir === undefined || process.env.NODE_DISABLE_COMPILE_CACHE === "1") return "off";
  const fs = process.getBuiltinModule("node:fs");
  const { Module, createRequire } = process.getBuiltinModule("node:module");
  const vm = process.getBuiltinModule("node:vm");
  const filename = fs.realpathSync(hotFile);
  const require = createRequire(filename);
  if (require.cache[filename] !== undefined) return "off";
  const loaded = privateDir(fs, dir) ? loadCache(fs, dir, name) : { dropped: false };
  let cachedData = loaded.payload;
  // Until this process exits, its marker says that a run with this cache has not finished.
  const marker = join(dir, `.${name}.${process.pid}.run`);
  if (cachedData !== undefined && !create(fs, marker)) cachedData = undefined;
  // The build writes the hot file in ASCII (tooling/tsup/hot-chunk.ts): read as Latin-1, one byte a character.
  const bytes = fs.readFileSync(filename);
  const source = process.getBuiltinModule("node:buffer").isAscii(bytes)
    ? bytes.toString("latin1")
    : bytes.toString("utf8");
  // The wrapper Node puts around a CommonJS module, on the first line (line numbers stay).
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const state: CodeCacheState =
    cachedData === undefined
      ? loaded.dropped
        ? "dropped"
        : "none"
      : script.cachedDataRejected === true
        ? "rejected"
        : "accepted";
  process.once("exit", (code) => {
    if (cachedData !== undefined) remove(fs, marker);
    if (state !== "accepted" && code === 0) writeCache(fs, dir, name, () => script.createCachedData());
  });
  const module = new Module(filename);
  module.filename = filename;
  module.paths = require.resolve.paths("x") ?? [];
  require.cache[filename] = module;
  try {
    const body = script.runInThisContext() as (...args: unknown[]) => void;
    body.call(module.exports, module.exports, require, module, filename, dirname(filename));
    module.loaded = true;
  } catch (error) {
    delete require.cache[filename];
    throw error;
  }
  return state;
}

type Fs = typeof import("node:fs");

/**
 * The cache's payload for V8, or why there is none: `dropped` when a run with it did not
 * finish or it failed its check (both remove it).
 */
function loadCache(fs: Fs, dir: string, name: string): { payload?: Buffer; dropped: boolean } {
  const file = join(dir, name);
  if (unfinishedRuns(fs, dir, name)) {
    remove(fs, file);
    return { dropped: true };
  }
  const bytes = readOwn(fs, file);
  if (bytes === undefined) return { dropped: false };
  const payload = verified(bytes);
  if (payload !== undefined) return { payload, dropped: false };
  remove(fs, file);
  return { dropped: true };
}

/** V8's payload when `bytes` is a cache file whose CRC-32 matches it, else undefined. */
function verified(bytes: Buffer): Buffer | undefined {
  if (bytes.length <= HEADER || bytes.toString("latin1", 0, MAGIC.length) !== MAGIC) return undefined;
  const payload = bytes.subarray(HEADER);
  return crc32(payload) === bytes.readUInt32LE(MAGIC.length) ? payload : undefined;
}

/** A cache file holding `payload`. */
function framed(payload: Buffer): Buffer {
  const header = Buffer.alloc(HEADER);
  header.write(MAGIC, 0, "latin1");
  header.writeUInt32LE(crc32(payload), MAGIC.length);
  return Buffer.concat([header, payload]);
}

const crc32 = (data: Buffer): number => process.getBuiltinModule("node:zlib").crc32(data);

/**
 * Whether a run with the cache `name` did not finish: a marker of a process that is gone.
 * Those markers are removed; a live process's (a run at the same time) is left alone.
 */
function unfinishedRuns(fs: Fs, dir: string, name: string): boolean {
  const prefix = `.${name}.`;
  let found = false;
  for (const entry of fs.readdirSync(dir)) {
    if (!entry.startsWith(prefix) || !entry.endsWith(".run")) continue;
    const pid = Number(entry.slice(prefix.length, -".run".length));
    if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) continue;
    remove(fs, join(dir, entry));
    found = true;
  }
  return found;
}

/** Whether process `pid` runs (one of another user's answers EPERM: it runs too). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Creates an empty file of the user's own, 0600; false when it cannot (or is there already). */
function create(fs: Fs, path: string): boolean {
  try {
    fs.closeSync(fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600));
    return true;
  } catch {
    return false;
  }
}

function remove(fs: Fs, path: string): void {
  try {
    fs.rmSync(path, { force: true });
  } catch {}
}

/** Owned by root or `uid`, and no one else may write to it (a sticky directory, /tmp, is fine). */
function safeAbove(info: import("node:fs").Stats, uid: number): boolean {
  if (info.uid !== 0 && info.uid !== uid) return false;
  return (info.mode & 0o1000) !== 0 || (info.mode & 0o022) === 0;
}

/**
 * Whether `path` is a directory (not a link) of this user's that no one else can enter or
 * write (none of the `closed` mode bits set), and no directory above it (by name, or on its real path) lets another user rename or
 * replace it: each is root's or the user's and writable by no one else, unless sticky. The
 * rules of @nodekit/fs-safe's trusted directories, checked synchronously with the launcher's
 * few calls (that package loads @nodekit/errors and answers in promises).
 */
function privateDir(fs: Fs, path: string, closed = 0o077): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return false;
  try {
    const info = fs.lstatSync(path, { throwIfNoEntry: false });
    if (info?.isDirectory() !== true || info.uid !== uid || (info.mode & closed) !== 0) return false;
    const above = new Set<string>();
    for (let at = dirname(path); !above.has(at); at = dirname(at)) above.add(at);
    const real = fs.realpathSync.native(dirname(path));
    for (let at = real; !above.has(at); at = dirname(at)) above.add(at);
    for (const at of above) {
      const parent = fs.lstatSync(at);
      // A link is as safe as the directory it is in (checked) and where it leads (on the real path, checked).
      if (!parent.isSymbolicLink() && !safeAbove(parent, uid)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/** The cache's bytes when the file is the user's own and no one else can write it (never through a link). */
function readOwn(fs: Fs, file: string): Buffer | undefined {
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const info = fs.fstatSync(fd);
      if (!info.isFile() || info.uid !== process.getuid?.() || (info.mode & 0o022) !== 0) return undefined;
      return fs.readFileSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * Writes the cache atomically (a file of its own, then renamed over the old), 0600 in a 0700
 * directory; removes the caches of older builds and Node.js versions, and what runs that are
 * gone left behind (markers, temporary files). A cache is only an optimisation: when anything
 * fails, nothing is written and nothing is said.
 */
function writeCache(fs: Fs, dir: string, name: string, data: () => Buffer, perBuild = Number.POSITIVE_INFINITY): void {
  const temporary = join(dir, `.${name}.${process.pid}.tmp`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!privateDir(fs, dir)) return;
    fs.writeFileSync(temporary, framed(data()), { mode: 0o600, flag: "wx" });
    fs.renameSync(temporary, join(dir, name));
    const entries = fs.readdirSync(dir);
    // What a killed run left: its temporary file, its marker (its cache was dropped when read).
    for (const entry of entries) {
      const left = /^\..+\.(\d+)\.(?:tmp|run)$/.exec(entry);
      if (left !== null && Number(left[1]) !== process.pid && !alive(Number(left[1]))) remove(fs, join(dir, entry));
    }
    // Other builds' caches: those of the KEPT_BUILDS written last stay (two installed versions,
    // or a checkout and its benchmark baseline, would otherwise evict each other on every run).
    const build = buildOf(name);
    const written = new Map<string, number>();
    const files = entries.filter((file) => file.endsWith(".bin") && buildOf(file) !== build);
    for (const file of files) {
      const at = fs.lstatSync(join(dir, file), { throwIfNoEntry: false })?.mtimeMs ?? 0;
      written.set(buildOf(file), Math.max(written.get(buildOf(file)) ?? 0, at));
    }
    const kept = new Set(
      [...written]
        .sort((a, b) => b[1] - a[1])
        .slice(0, KEPT_BUILDS)
        .map(([other]) => other),
    );
    for (const file of files) if (!kept.has(buildOf(file))) fs.rmSync(join(dir, file), { force: true });
    // This build's own files beyond `perBuild`: the oldest go.
    const own = entries.filter((file) => file.endsWith(".bin") && buildOf(file) === build && file !== name);
    if (own.length >= perBuild) {
      const age = (file: string) => fs.lstatSync(join(dir, file), { throwIfNoEntry: false })?.mtimeMs ?? 0;
      const oldest = own.map((file) => [file, age(file)] as const).sort((a, b) => a[1] - b[1]);
      for (const [file] of oldest.slice(0, own.length - perBuild + 1)) remove(fs, join(dir, file));
    }
  } catch {
    remove(fs, temporary);
  }
}

/**
 * The payload of `<dir>/<name>`, a file written by `writePrivateFile`, when the directory and
 * the file pass the code cache's checks (private, the user's own, no link followed) and the
 * payload its CRC-32; undefined otherwise (a file that fails its check is removed).
 */
export function readPrivateFile(dir: string, name: string): Buffer | undefined {
  const fs = process.getBuiltinModule("node:fs");
  if (!privateDir(fs, dir)) return undefined;
  const bytes = readOwn(fs, join(dir, name));
  if (bytes === undefined) return undefined;
  const payload = verified(bytes);
  if (payload === undefined) remove(fs, join(dir, name));
  return payload;
}

/**
 * Writes `payload` to `<dir>/<name>` as a code cache is written (atomically, 0600 in a private
 * 0700 directory, with its CRC-32), `<name>` being `<build>.<key>.bin`: removes the files of
 * all but the two other builds written last, and this build's oldest beyond `perBuild`.
 */
export function writePrivateFile(dir: string, name: string, payload: Buffer, perBuild: number): void {
  writeCache(process.getBuiltinModule("node:fs"), dir, name, () => payload, perBuild);
}
