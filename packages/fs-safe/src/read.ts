import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { constants, type FileHandle, lstat, open, realpath, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { UserError } from "@nodekit/errors";
import { assertTrustedDir, type TrustOptions } from "./dirs.ts";
import { errorCodes } from "./errors.ts";
import { currentUid, errnoCode, type Identity, isTrustedOwner, octal, ownerName } from "./owner.ts";

export type PrivateFileRead =
  | { readonly kind: "missing" }
  | { readonly kind: "read"; readonly data: Buffer }
  /** Not used: `reason` says why in words, `fault` as data. Nothing of the content is read. */
  | { readonly kind: "unsafe"; readonly fault: "link" | "not-file" | "owner" | "mode"; readonly reason: string }
  | { readonly kind: "unreadable"; readonly code: string };

type Fault = "link" | "not-file" | "owner" | "mode";
type Opened =
  | { readonly kind: "open"; readonly file: FileHandle }
  | { readonly kind: "missing" }
  | { readonly kind: "unsafe"; readonly fault: Fault; readonly reason: string }
  | { readonly kind: "unreadable"; readonly code: string };

/**
 * Opens `path` without following a link and checks the open file (so nothing can be
 * swapped in between): a regular file, the user's own, no mode bit of `forbidden` set.
 * The caller closes the handle of an "open" answer.
 */
async function openChecked(path: string, uid: number | undefined, forbidden: number): Promise<Opened> {
  let file: FileHandle;
  try {
    file = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = errnoCode(error) ?? String(error);
    if (code === "ENOENT") return { kind: "missing" };
    if (code === "ELOOP") return { kind: "unsafe", fault: "link", reason: `${path} is a symbolic link` };
    return { kind: "unreadable", code };
  }
  let fault: Opened | undefined;
  try {
    const info = await file.stat();
    if (!info.isFile()) fault = { kind: "unsafe", fault: "not-file", reason: `${path} is not a regular file` };
    else if (uid !== undefined && info.uid !== uid) {
      fault = { kind: "unsafe", fault: "owner", reason: `${path} belongs to ${ownerName(info.uid)}` };
    } else if (uid !== undefined && (info.mode & forbidden) !== 0) {
      fault = {
        kind: "unsafe",
        fault: "mode",
        reason: `${path} is ${forbidden & 0o044 ? "readable or writable" : "writable"} by other users (mode ${octal(info.mode)})`,
      };
    } else return { kind: "open", file };
  } catch (error) {
    fault = { kind: "unreadable", code: errnoCode(error) ?? String(error) };
  }
  await file.close();
  return fault;
}

/**
 * Reads a file that holds a secret (a token cache entry) only if it is safe to trust: a
 * regular file, not a symbolic link (opened with O_NOFOLLOW, checked on the open file, so
 * nothing can be swapped in between), owned by the user and readable by no one else — the
 * rules ssh has for a private key. Never throws for what it finds.
 */
export async function readPrivateFile(path: string, options: Identity = {}): Promise<PrivateFileRead> {
  const opened = await openChecked(path, currentUid(options), 0o077);
  if (opened.kind !== "open") return opened;
  try {
    return { kind: "read", data: await opened.file.readFile() };
  } catch (error) {
    return { kind: "unreadable", code: errnoCode(error) ?? String(error) };
  } finally {
    await opened.file.close();
  }
}

export type OwnFileDigest =
  | { readonly kind: "missing" }
  | { readonly kind: "hashed"; readonly sha256: string; readonly bytes: number }
  /** Not hashed: `reason` says why in words, `fault` as data. */
  | { readonly kind: "unsafe"; readonly fault: "link" | "not-file" | "owner" | "mode"; readonly reason: string }
  | { readonly kind: "unreadable"; readonly code: string };

/**
 * The sha256 of a file only its user can have changed — a program to check against a
 * pinned digest before it is run: opened with O_NOFOLLOW and checked on the open file (a
 * regular file of the user's own, writable by no one else; others may read and run it,
 * 0755). Read in chunks, so memory stays small whatever its size. Never throws for what it
 * finds.
 */
export async function digestOwnFile(path: string, options: Identity = {}): Promise<OwnFileDigest> {
  const opened = await openChecked(path, currentUid(options), 0o022);
  if (opened.kind !== "open") return opened;
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(1 << 20);
  let bytes = 0;
  try {
    for (;;) {
      const { bytesRead: count } = await opened.file.read(buffer, 0, buffer.length, null);
      if (count === 0) break;
      hash.update(buffer.subarray(0, count));
      bytes += count;
    }
    return { kind: "hashed", sha256: hash.digest("hex"), bytes };
  } catch (error) {
    return { kind: "unreadable", code: errnoCode(error) ?? String(error) };
  } finally {
    await opened.file.close();
  }
}

/**
 * Checks that a settings file (nvkectl's site configuration) can only have been written by
 * the user or root: the file (a link is followed: dotfile managers link such files) and
 * every directory above it and above its target, by the rules of {@link assertTrustedDir}.
 * A missing file is fine. Throws FILE_UNSAFE or DIR_UNSAFE.
 */
export async function assertTrustedFile(path: string, options: TrustOptions & { what?: string } = {}): Promise<void> {
  const uid = currentUid(options);
  if (uid === undefined) return;
  const what = options.what ?? "the file";
  let link: Stats;
  try {
    link = await lstat(path);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      await assertTrustedDir(dirname(path), { ...options, what: `the directory of ${what}` });
      return;
    }
    throw error;
  }
  await assertTrustedDir(dirname(path), { ...options, what: `the directory of ${what}` });
  let info = link;
  if (link.isSymbolicLink()) {
    try {
      const real = await realpath(path);
      info = await stat(real);
      await assertTrustedDir(dirname(real), { ...options, what: `the directory of ${what}` });
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return;
      throw error;
    }
  }
  if (!info.isFile()) return;
  const gid = options.gid ?? (typeof process.getegid === "function" ? process.getegid() : undefined);
  let why: string | undefined;
  if (!isTrustedOwner(info.uid, uid)) why = `it belongs to ${ownerName(info.uid)}`;
  else if ((info.mode & 0o002) !== 0) why = `every user may write to it (mode ${octal(info.mode)})`;
  else if ((info.mode & 0o020) !== 0 && !(info.uid === uid && info.gid === gid)) {
    why = `its group may write to it (mode ${octal(info.mode)})`;
  }
  if (why === undefined) return;
  throw new UserError(errorCodes.FILE_UNSAFE, `${what} ${path} is not safe to use`, {
    why: `${why}, so another user could have changed what it says`,
    next: `make it yours and not writable by others (chmod go-w ${path}), or remove it`,
    facts: { path },
  });
}
