// The main script of nvkectl's and nr's single executable applications (src/sea.ts builds
// them). Node runs it from inside the executable, where `require` reaches only Node's
// built-ins; the CLI's package (its bundle, its few dependencies, nvkectl's deploy path) rides
// along as assets. On the first start they are written, once, to a private directory under
// the user's cache (~/.cache/nodekit/executables/<name>-<version>-<digest>/; executables/ made 0700 and checked
// to be the user's own, its parents writable by nobody else, as ssh checks its directory; else
// a fresh private directory for this run), and the CLI's bin is loaded from there
// with a real require: later starts load it as an installed package loads.
"use strict";
const sea = require("node:sea");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const zlib = require("node:zlib");
const { createRequire } = require("node:module");

const index = JSON.parse(sea.getAsset("index.json", "utf8"));

const uid = typeof process.getuid === "function" ? process.getuid() : undefined;

/** A directory nobody else can change: not a symlink, ours (or root's), writable by no group or other. */
function safeDir(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = fs.lstatSync(dir);
  return info.isDirectory() && (uid === undefined || info.uid === uid || info.uid === 0) && (info.mode & 0o022) === 0;
}

/** A directory that is ours alone: not a symlink, owned by us, no access for others. */
function privateDir(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = fs.lstatSync(dir);
  return info.isDirectory() && (uid === undefined || info.uid === uid) && (info.mode & 0o077) === 0;
}

function extract(target) {
  const tmp = `${target}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { mode: 0o700 });
  index.files.forEach((file, i) => {
    const to = path.join(tmp, file.path);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, zlib.gunzipSync(Buffer.from(sea.getAsset(String(i)))), { mode: file.mode });
  });
  fs.writeFileSync(path.join(tmp, ".complete"), "");
  try {
    fs.renameSync(tmp, target);
  } catch (error) {
    // Another start finished first: its copy is the same.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(target, ".complete"))) throw error;
  }
}

function home() {
  const cacheBase = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  const base = path.join(cacheBase, "nodekit", "executables");
  const target = path.join(base, `${index.name.replace("/", "+")}-${index.version}-${index.digest.slice(0, 16)}`);
  if (safeDir(cacheBase) && safeDir(path.join(cacheBase, "nodekit")) && privateDir(base)) {
    if (!fs.existsSync(path.join(target, ".complete"))) extract(target);
    return target;
  }
  // A cache directory that is not ours alone is never run from: a fresh private one instead.
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), "nodekit-sea-"));
  process.on("exit", () => fs.rmSync(fresh, { recursive: true, force: true }));
  const dir = path.join(fresh, "app");
  extract(dir);
  return dir;
}

createRequire(path.join(home(), "package.json"))(`./${index.bin}`);
