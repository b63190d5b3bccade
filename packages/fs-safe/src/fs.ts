import * as fs from "node:fs";
import { promisify } from "node:util";

// node:fs's callback functions as promises. Not node:fs/promises: importing it makes Node
// load eight more of its internal modules (FileHandle, readline, fs/dir, the watchers), ≈ 2 ms
// of every short-lived command that reads the site configuration or a cached token; node:fs
// and node:util are loaded by Node's bootstrap anyway. File descriptors stand for handles.
export const chmod = promisify(fs.chmod);
export const close = promisify(fs.close);
export const fchmod = promisify(fs.fchmod);
export const fstat = promisify(fs.fstat);
export const fsync = promisify(fs.fsync);
export const lstat = promisify(fs.lstat);
export const mkdir = promisify(fs.mkdir);
export const open = promisify(fs.open);
export const read = (fd: number, buffer: Buffer, offset: number, length: number, position: number | null) =>
  new Promise<number>((resolve, reject) =>
    fs.read(fd, buffer, offset, length, position, (error, count) => (error ? reject(error) : resolve(count))),
  );
export const readdir = promisify(fs.readdir);
export const readFile = promisify(fs.readFile);
// The native realpath(3), as node:fs/promises' realpath is.
export const realpath = promisify(fs.realpath.native);
export const rename = promisify(fs.rename);
export const stat = promisify(fs.stat);
export const unlink = promisify(fs.unlink);
export const writeFile = promisify(fs.writeFile);
