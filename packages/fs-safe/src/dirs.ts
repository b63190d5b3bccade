import type { Stats } from "node:fs";
import { chmod, lstat, mkdir, realpath } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { currentUid, errnoCode, type Identity, isTrustedOwner, octal, ownerName } from "./owner.ts";

export interface TrustOptions extends Identity {
  /** The group that counts as one's own for group-writable directories. Default: the effective gid. */
  gid?: number;
}

export interface PrivateDirOptions extends TrustOptions {
  /** Mode of the directories created, and of `dir` when `narrow` is set. Default 0o700. */
  mode?: number;
  /** Set an existing `dir`'s mode to `mode` when it is wider (a token cache: nobody else needs to list it). */
  narrow?: boolean;
  /** The directory in words, for messages: "the token cache directory". */
  what?: string;
}

const STICKY = 0o1000;

/**
 * The lstat and realpath answers of {@link assertTrustedDir}, shared by the checks given the
 * same lookups: checking many directories under one parent (a token cache with a directory
 * per site) asks about that parent and each directory above it once, not once per check. The
 * answers are kept as long as the lookups object is: make one per command, not per process.
 */
export interface DirLookups {
  lstat(path: string): Promise<Stats>;
  realpath(path: string): Promise<string>;
}

/** Lookups that remember each path's answer (see {@link DirLookups}). */
export function dirLookups(): DirLookups {
  const stats = new Map<string, Promise<Stats>>();
  const reals = new Map<string, Promise<string>>();
  const once = <T>(memo: Map<string, Promise<T>>, path: string, ask: (path: string) => Promise<T>) => {
    let answer = memo.get(path);
    if (answer === undefined) {
      answer = ask(path);
      // Judged by each caller; an unhandled rejection here would only repeat theirs.
      answer.catch(() => {});
      memo.set(path, answer);
    }
    return answer;
  };
  return {
    lstat: (path) => once(stats, path, (at) => lstat(at)),
    realpath: (path) => once(reals, path, (at) => realpath(at)),
  };
}

/**
 * Why a directory cannot be trusted to hold what only its user should change, or
 * undefined when it can. The rules are ssh's for ~/.ssh: it must belong to the user (or to
 * root, for the directories above it) and no one else may write to it; a sticky directory
 * (/tmp) is fine above, as others cannot rename what is in it. Group write is accepted only
 * for one's own group (user private groups, umask 002).
 */
function distrust(info: Stats, own: boolean, uid: number, gid: number | undefined): string | undefined {
  if (!info.isDirectory()) return "it is not a directory";
  if (own ? info.uid !== uid : !isTrustedOwner(info.uid, uid)) {
    return `it belongs to ${ownerName(info.uid)}, not to ${ownerName(uid)}`;
  }
  const sticky = (info.mode & STICKY) !== 0;
  if (own || !sticky) {
    if ((info.mode & 0o002) !== 0) return `every user may write to it (mode ${octal(info.mode)})`;
    if ((info.mode & 0o020) !== 0 && !(info.uid === uid && gid !== undefined && info.gid === gid)) {
      return `its group may write to it (mode ${octal(info.mode)})`;
    }
  }
  return undefined;
}

/**
 * The directories above `dir`, nearest first: its parents by name, then those of its parent's
 * real path (`realParent`) that are not among them. Each is lstat-ed as soon as it is known.
 */
function ancestorsOf<T>(
  dir: string,
  realParent: Promise<string | undefined>,
  lstatOf: (path: string) => T,
): { lexical: T[]; real: Promise<T[]> } {
  const seen = new Set<string>();
  for (let at = dirname(dir); !seen.has(at); at = dirname(at)) seen.add(at);
  const lexical = [...seen].map(lstatOf);
  const real = realParent.then((parent) => {
    const more: string[] = [];
    // A missing parent is reported by whoever needs it.
    for (let at = parent; at !== undefined; at = dirname(at) === at ? undefined : dirname(at)) {
      if (!seen.has(at)) {
        seen.add(at);
        more.push(at);
      }
    }
    return more.map(lstatOf);
  });
  return { lexical, real };
}

/**
 * Checks that `dir` and every directory above it can be trusted with settings or secrets
 * (see {@link distrust}); `own` directories must belong to the user, not root. Throws
 * DIR_UNSAFE naming the directory and why. A directory that does not exist is not checked.
 * `lookups` ({@link dirLookups}) shares the file system's answers with other checks.
 */
export async function assertTrustedDir(
  dir: string,
  options: TrustOptions & { own?: boolean; what?: string; lookups?: DirLookups } = {},
): Promise<void> {
  const uid = currentUid(options);
  if (uid === undefined) return;
  const gid = options.gid ?? (typeof process.getegid === "function" ? process.getegid() : undefined);
  const target = resolve(dir);
  const what = options.what ?? "the directory";
  // Every lstat and realpath is issued at once (one round trip to the thread pool instead of
  // one per directory), and the answers are judged in the order a walk would meet them:
  // the directory, its real path, then each directory above. The first unsafe one is reported.
  const ask: DirLookups = options.lookups ?? { lstat: (path) => lstat(path), realpath: (path) => realpath(path) };
  const lstatOf = (path: string) =>
    ask.lstat(path).then(
      (info) => ({ path, info }),
      (error: unknown) => ({ path, error }),
    );
  const realOf = (path: string) =>
    ask.realpath(path).then(
      (real) => ({ real }),
      (error: unknown) => ({ error }),
    );
  const own = options.own ?? false;
  const targetInfo = lstatOf(target);
  const realTarget = realOf(target);
  const realParent = realOf(dirname(target)).then((result) => ("real" in result ? result.real : undefined));
  const ancestors = ancestorsOf(target, realParent, lstatOf);
  const check = async (found: Promise<{ path: string; info?: Stats; error?: unknown }>, own: boolean) => {
    const { path, info, error } = await found;
    if (info === undefined) {
      if (errnoCode(error) === "ENOENT") return;
      throw error;
    }
    // A symbolic link is as safe as the directory it sits in (checked too) and where it leads (resolved below).
    if (info.isSymbolicLink()) return;
    const why = distrust(info, own, uid, gid);
    if (why === undefined) return;
    const above = path !== target;
    throw new UserError(
      errorCodes.DIR_UNSAFE,
      above ? `${what} ${target} is inside ${path}, which is not safe` : `${what} ${target} is not safe`,
      {
        why: `${why}, so another user could change or replace what is in it`,
        next: above
          ? `use a directory whose parents only you (or root) can change, or fix ${path} (chown, chmod go-w)`
          : `make it yours and private (chown ${ownerName(uid).replace(/ \(uid \d+\)$/, "")} ${path}; chmod 700 ${path}), or remove it`,
        facts: { path: target, unsafe: path },
      },
    );
  };
  await check(targetInfo, own);
  const real = await realTarget;
  if ("error" in real) {
    if (errnoCode(real.error) !== "ENOENT") throw real.error;
  } else if (real.real !== target) {
    await check(lstatOf(real.real), own);
  }
  for (const ancestor of ancestors.lexical) await check(ancestor, false);
  for (const ancestor of await ancestors.real) await check(ancestor, false);
}

/**
 * Creates `dir` (and what is missing above it) with `mode`, then checks it as
 * {@link assertTrustedDir} does: it must be the user's own and private, and nothing above
 * it writable by others. Throws DIR_UNSAFE, or FILE_WRITE_FAILED when it cannot be created.
 */
export async function ensurePrivateDir(dir: string, options: PrivateDirOptions = {}): Promise<void> {
  const mode = options.mode ?? 0o700;
  const what = options.what ?? "the directory";
  try {
    await mkdir(dir, { recursive: true, mode });
  } catch (error) {
    throw new UserError(errorCodes.FILE_WRITE_FAILED, `cannot create ${what} ${dir}: ${errnoCode(error) ?? error}`, {
      next: "check that its parent directory exists and that you may write to it",
      facts: { path: dir },
      cause: error,
    });
  }
  if (options.narrow && currentUid(options) !== undefined) {
    const info = await lstat(dir);
    if (info.isDirectory() && info.uid === currentUid(options) && (info.mode & 0o777 & ~mode) !== 0) {
      await chmod(dir, mode);
    }
  }
  await assertTrustedDir(dir, { ...options, own: true, what });
}
