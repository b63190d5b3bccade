import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { constants, type FileHandle, link, lstat, open, readdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { currentUid, errnoCode, type Identity, ownerName } from "./owner.ts";

export interface WriteFileSafeOptions extends Identity {
  /** The file's mode, whatever the umask (0o600 for anything holding a secret). */
  mode: number;
  /**
   * Replace a file that belongs to another user (`--force`). The new file is the writer's
   * own: ownership is never handed back to the previous owner. Default false: refused.
   */
  replaceOthers?: boolean;
  /** The file in words, for messages: "the kubeconfig", "the site configuration". */
  what?: string;
  /** Now, for telling stale temporary files from a write in progress. Default: the clock. */
  now?: () => number;
}

/** A temporary file of ours left by a writer that died (kill -9) is removed once it is this old, or its writer is gone. */
export const STALE_TEMP_MS = 10 * 60_000;

const tempPattern = (base: string) =>
  new RegExp(`^\\.${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.(\\d+)\\.[0-9a-f]{12}\\.tmp$`);

/**
 * What {@link writeFileSafe} checks before it writes, for a file another program will write
 * (kind, writing a kubeconfig): a link in place of the file is FILE_IS_SYMLINK, a directory
 * or device FILE_NOT_REGULAR, another user's file FILE_OWNED_BY_OTHER unless `replaceOthers`.
 * A missing file is fine.
 */
export async function checkWriteTarget(
  path: string,
  options: Identity & { replaceOthers?: boolean; what?: string } = {},
): Promise<void> {
  const what = options.what ?? "the file";
  const uid = currentUid(options);
  let existing: Stats | undefined;
  try {
    existing = await lstat(path);
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw writeFailed(path, what, error);
  }
  if (existing?.isSymbolicLink()) {
    throw new UserError(errorCodes.FILE_IS_SYMLINK, `${what} ${path} is a symbolic link; it was not written`, {
      why: "files are never written through a link: one planted in a shared directory would send the content wherever it points",
      next: "remove the link, or name the file it points to",
      facts: { path },
    });
  }
  if (existing !== undefined && !existing.isFile()) {
    throw new UserError(errorCodes.FILE_NOT_REGULAR, `${what} ${path} is not a regular file; it was not written`, {
      why: existing.isDirectory() ? "it is a directory" : "it is a device, socket or pipe",
      next: "name a file path",
      facts: { path },
    });
  }
  if (existing !== undefined && uid !== undefined && existing.uid !== uid && !options.replaceOthers) {
    throw new UserError(
      errorCodes.FILE_OWNED_BY_OTHER,
      `${what} ${path} belongs to ${ownerName(existing.uid)}; it was not replaced`,
      {
        why: `another user made it; replacing it would leave content of ${ownerName(uid)} where that user expects their own file`,
        next: "choose another path, or remove the file first",
        facts: { path, owner: existing.uid },
      },
    );
  }
}

/**
 * Writes a whole file or nothing: the content goes into a new temporary file beside it
 * (created exclusively, never through a link), which is then renamed over the old one.
 * Unlike write-file-atomic it never resolves a symbolic link (a link in place of the file
 * is refused: FILE_IS_SYMLINK) and never chowns the new file to the old one's owner; a file
 * another user owns is refused (FILE_OWNED_BY_OTHER) unless `replaceOthers`. Temporary files
 * a killed writer left beside the file are removed first. Other failures: FILE_WRITE_FAILED.
 */
export async function writeFileSafe(
  path: string,
  data: string | Uint8Array,
  options: WriteFileSafeOptions,
): Promise<void> {
  const what = options.what ?? "the file";
  const uid = currentUid(options);
  await checkWriteTarget(path, options);

  const dir = dirname(path);
  const base = basename(path);
  await removeStaleTemps(dir, base, uid, options.now ?? Date.now);
  const temp = join(dir, `.${base}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    // O_EXCL: a name someone else made (a link, a file) fails instead of being written through.
    const file = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, options.mode);
    try {
      // The umask may have narrowed the mode, and a wider one must never be left.
      await file.chmod(options.mode);
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    // rename replaces whatever is at `path` now (a link put there since: the link itself, not its target).
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw writeFailed(path, what, error);
  }
  await syncDir(dir);
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function writeFailed(path: string, what: string, error: unknown): UserError {
  const code = errnoCode(error) ?? String(error);
  return new UserError(errorCodes.FILE_WRITE_FAILED, `cannot write ${what} ${path}: ${code}`, {
    why:
      code === "ENOENT"
        ? "its directory does not exist"
        : code === "EACCES" || code === "EPERM"
          ? "you may not write to its directory"
          : code === "ENOSPC"
            ? "the disk is full"
            : undefined,
    next: "check that the directory exists and that you may write to it",
    facts: { path },
    cause: error,
  });
}

/**
 * Temporary files of ours for `base` in `dir` whose writer is gone (a killed process) or
 * that are older than {@link STALE_TEMP_MS}. Only the user's own files, by our name
 * pattern (`.<base>.<pid>.<random>.tmp`), are touched.
 */
async function removeStaleTemps(dir: string, base: string, uid: number | undefined, now: () => number): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  const pattern = tempPattern(base);
  for (const name of names) {
    const match = pattern.exec(name);
    if (match === null) continue;
    const pid = Number(match[1]);
    const path = join(dir, name);
    try {
      const info = await lstat(path);
      if (uid !== undefined && info.uid !== uid) continue;
      const old = now() - info.mtimeMs > STALE_TEMP_MS;
      if (old || (pid !== process.pid && !processAlive(pid))) await unlink(path);
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}

/** Whether process `pid` runs (another user's answers EPERM: it runs too), as whoever left a temp file or a lock. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Not every file system lets a directory be synced; the rename is done either way.
  }
}

/**
 * Sets a file's mode without following a link (the file is opened O_NOFOLLOW and changed
 * through that handle): for a file another program wrote, such as kind's kubeconfig. A link
 * is FILE_IS_SYMLINK; a file another user owns FILE_OWNED_BY_OTHER; other failures
 * FILE_WRITE_FAILED.
 */
export async function restrictFile(path: string, mode: number, options: Identity & { what?: string } = {}) {
  const what = options.what ?? "the file";
  await checkWriteTarget(path, options);
  let file: FileHandle;
  try {
    file = await open(path, constants.O_RDONLY | O_NOFOLLOW);
  } catch (error) {
    if (errnoCode(error) === "ELOOP") {
      throw new UserError(errorCodes.FILE_IS_SYMLINK, `${what} ${path} is a symbolic link; its mode was not changed`, {
        why: "a link put in place of the file would have its target's mode changed instead",
        next: "remove the link, or name the file it points to",
        facts: { path },
      });
    }
    throw writeFailed(path, what, error);
  }
  try {
    await file.chmod(mode);
  } catch (error) {
    throw writeFailed(path, what, error);
  } finally {
    await file.close();
  }
}

/** What {@link writeNewFileSafe} did: wrote the file, or found one there already and left it alone. */
export type NewFileWrite = { kind: "written" } | { kind: "exists" };

/**
 * Writes a new file whole or not at all, never over anything already at `path` (a file, a
 * link, a directory: `{ kind: "exists" }`, and that is left as it was): for an archive a
 * command streams out (a support bundle). `source` is called once the path is known to be
 * free (an archiver that starts on creation is never started for nothing); its content streams into a temporary file beside
 * `path` (created exclusively with `mode`, never through a link), is synced, and is then
 * published with link(2), which fails instead of replacing what another writer put there in
 * the meantime. A source that fails, or a failed write, leaves nothing at `path` and no
 * temporary file. Failures other than an existing path are FILE_WRITE_FAILED.
 */
export async function writeNewFileSafe(
  path: string,
  source: () => AsyncIterable<Uint8Array | string>,
  options: { mode: number; what?: string },
): Promise<NewFileWrite> {
  const what = options.what ?? "the file";
  try {
    await lstat(path);
    return { kind: "exists" };
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw writeFailed(path, what, error);
  }
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const file = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, options.mode);
    try {
      await file.chmod(options.mode);
      for await (const chunk of source()) await file.writeFile(chunk);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await link(temp, path);
    } catch (error) {
      if (errnoCode(error) === "EEXIST") return { kind: "exists" };
      throw error;
    }
  } catch (error) {
    throw writeFailed(path, what, error);
  } finally {
    await unlink(temp).catch(() => {});
  }
  await syncDir(dir);
  return { kind: "written" };
}
