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
// It is code, so it is read only from a directory and a file of the user's own that no one
// else can write (no symbolic link is followed), and written atomically, 0600 in a 0700 directory.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's own. The hot file has no
// import() of its own (in a script compiled through node:vm that would need a loader Node
// calls experimental): the build routes each through dist/dynamic-import.js (tooling/tsup/hot-chunk.ts).

/** What became of the cache when the hot file was loaded. */
export type CodeCacheState =
  /** Compiled with the cache of an earlier run. */
  | "accepted"
  /** V8 refused the cache (another V8 or other flags): it is written again at exit. */
  | "rejected"
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

/**
 * Loads `hotFile` (CommonJS) as `require` would, registered in `require.cache` so that every
 * later `require` of it gets this same module, compiled with `<dir>/<name>` when that is the
 * user's own; arranges for a cache to be written at exit when there was none or it was
 * rejected. Returns "off" (and does nothing) when the module is loaded already or the cache is
 * turned off: `require` then loads the file as always.
 */
export function requireWithCodeCache(hotFile: string, dir: string | undefined, name: string): CodeCacheState {
  if (dir === undefined || process.env.NODE_DISABLE_COMPILE_CACHE === "1") return "off";
  const fs = process.getBuiltinModule("node:fs");
  const { Module, createRequire } = process.getBuiltinModule("node:module");
  const vm = process.getBuiltinModule("node:vm");
  const filename = fs.realpathSync(hotFile);
  const require = createRequire(filename);
  if (require.cache[filename] !== undefined) return "off";
  const cacheFile = join(dir, name);
  const cachedData = readOwn(fs, dir, cacheFile);
  const source = fs.readFileSync(filename, "utf8");
  // The wrapper Node puts around a CommonJS module, on the first line (line numbers stay).
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, {
    filename,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const state: CodeCacheState =
    cachedData === undefined ? "none" : script.cachedDataRejected === true ? "rejected" : "accepted";
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
  if (state !== "accepted") {
    process.once("exit", (code) => {
      if (code === 0) writeCache(fs, dir, name, () => script.createCachedData());
    });
  }
  return state;
}

type Fs = typeof import("node:fs");

/** Whether `path` is a directory (not a link) of this user's that no one else can enter or write. */
function ownPrivateDir(fs: Fs, path: string): boolean {
  const info = fs.lstatSync(path, { throwIfNoEntry: false });
  return info?.isDirectory() === true && info.uid === process.getuid?.() && (info.mode & 0o077) === 0;
}

/** The cache's bytes when the directory and the file are the user's own and no one else can write them. */
function readOwn(fs: Fs, dir: string, file: string): Buffer | undefined {
  try {
    if (!ownPrivateDir(fs, dir)) return undefined;
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
 * directory; removes the caches of older builds and Node.js versions. A cache is only an
 * optimisation: when anything fails, nothing is written and nothing is said.
 */
function writeCache(fs: Fs, dir: string, name: string, data: () => Buffer): void {
  const temporary = join(dir, `.${name}.${process.pid}.tmp`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!ownPrivateDir(fs, dir)) return;
    fs.writeFileSync(temporary, data(), { mode: 0o600, flag: "wx" });
    fs.renameSync(temporary, join(dir, name));
    // Other builds' caches: those of the KEPT_BUILDS written last stay (two installed versions,
    // or a checkout and its benchmark baseline, would otherwise evict each other on every run).
    const build = buildOf(name);
    const written = new Map<string, number>();
    const files = fs.readdirSync(dir).filter((file) => file.endsWith(".bin") && buildOf(file) !== build);
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
  } catch {
    try {
      fs.rmSync(temporary, { force: true });
    } catch {}
  }
}
