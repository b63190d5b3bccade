import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { errnoCode } from "./owner.ts";

export interface LockOptions {
  /**
   * A lock whose holder has not refreshed it for this long is stale (its process was
   * killed) and is taken over. The holder refreshes it every half of this. Default 5 s, at least 2 s.
   */
  staleMs?: number;
  /** How long to wait for another process to finish before giving up with FILE_LOCKED. Default 30 s. */
  waitMs?: number;
  /** The file in words, for messages. */
  what?: string;
}

/** Where the lock for `path` is: a directory beside it (proper-lockfile's layout). */
export const lockPathOf = (path: string) => `${path}.lock`;

/**
 * Runs `fn` holding an exclusive lock on `path` (the file need not exist), so that a
 * load → change → write by several processes at once loses no change: each waits its turn.
 * The lock is proper-lockfile's: a directory `<path>.lock` created atomically, refreshed
 * while held, released when `fn` settles (and on exit); one left by a killed process goes
 * stale and is taken over. Throws FILE_LOCKED after `waitMs`, FILE_LOCK_LOST when the lock
 * was taken over while `fn` ran (it stalled for longer than `staleMs`).
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const { lock } = await import("proper-lockfile");
  const staleMs = Math.max(options.staleMs ?? 5_000, 2_000);
  const waitMs = options.waitMs ?? 30_000;
  const what = options.what ?? "the file";
  const lockfilePath = lockPathOf(path);
  const deadline = Date.now() + waitMs;
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  for (let attempt = 0; ; attempt++) {
    try {
      release = await lock(path, {
        realpath: false,
        lockfilePath,
        stale: staleMs,
        onCompromised: (error) => {
          compromised = error;
        },
      });
      break;
    } catch (error) {
      if (errnoCode(error) !== "ELOCKED") {
        throw new UserError(errorCodes.FILE_WRITE_FAILED, `cannot lock ${what} ${path}: ${errnoCode(error) ?? error}`, {
          next: "check that its directory exists and that you may write to it",
          facts: { path },
          cause: error,
        });
      }
      if (Date.now() >= deadline) {
        throw new UserError(errorCodes.FILE_LOCKED, `${what} ${path} is locked by another process`, {
          why: `${lockfilePath} was held for more than ${Math.round(waitMs / 1000)} s by a process that is still running`,
          next: "wait for the other command to finish and try again",
          facts: { path, lock: lockfilePath },
        });
      }
      // Short, growing, jittered waits: a config change holds the lock for milliseconds.
      const pause = Math.min(250, 5 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
  let result: T;
  try {
    result = await fn();
  } finally {
    await release().catch(() => {});
  }
  if (compromised !== undefined) {
    throw new UserError(errorCodes.FILE_LOCK_LOST, `the lock on ${what} ${path} was lost while it was being changed`, {
      why: `this process held it for longer than ${Math.round(staleMs / 1000)} s without refreshing it, so another process may have taken it over and written too`,
      next: "check the file's content and run the command again if the change is missing",
      facts: { path },
      cause: compromised,
    });
  }
  return result;
}
