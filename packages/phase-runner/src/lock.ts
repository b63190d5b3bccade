import { readFileSync } from "node:fs";
import { lstat, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { UserError } from "@nodekit/errors";
import { assertTrustedDir, ensurePrivateDir, processAlive, readPrivateFile, writeFileSafe } from "@nodekit/fs-safe";
import * as z from "zod";
import { errorCodes } from "./errors.ts";

/** Who holds a lock: written beside it when it is taken, so a refusal can say who. */
export interface LockOwner {
  pid: number;
  host: string;
  /** What holds it, e.g. "nr cluster register". */
  name: string;
  since: string;
  runId: string;
  /**
   * When its process started, in clock ticks after boot (field 22 of /proc/<pid>/stat), so
   * that a pid reused by another process is not taken for the run's; absent where /proc is not.
   */
  startTime?: string;
}

const OwnerSchema = z.object({
  pid: z.int().positive(),
  host: z.string(),
  name: z.string(),
  since: z.string(),
  runId: z.string(),
  startTime: z.string().optional(),
});

export interface LockOptions {
  /** The file the lock guards (the state file); the lock is the directory `<file>.lock` unless `path` says otherwise. */
  file: string;
  /**
   * Where the lock is, when not beside the file: one lock for every state on the machine
   * (`/run/nr/register.lock`), so that two states cannot run on one machine at once. Its
   * directory must be the user's own, as the state's is.
   */
  path?: string;
  name: string;
  runId: string;
  /** A lock not refreshed for this long is stale when its owner cannot be checked (default 10 s). */
  staleMs?: number;
  /** Called when the lock is lost while held (removed by hand, taken by another). */
  onCompromised?: (error: Error) => void;
  /** Whether a process is alive (default: `process.kill(pid, 0)`); tests pass their own. */
  isAlive?: (pid: number) => boolean;
  /** When a process started (default: field 22 of /proc/<pid>/stat; undefined where it cannot be read); tests pass their own. */
  startTimeOf?: (pid: number) => string | undefined;
  clock?: () => Date;
}

export interface HeldLock {
  readonly owner: LockOwner;
  release(): Promise<void>;
}

/** What is known about a lock found in place. */
export type LockInspection =
  | { state: "free" }
  | { state: "held"; owner: LockOwner | undefined }
  | { state: "stale"; owner: LockOwner | undefined; why: string };

export const lockPathOf = (file: string) => `${file}.lock`;
const ownerPathOf = (lock: string) => `${lock}-owner.json`;
const lockOf = (file: string, options: Pick<LockOptions, "path">) => options.path ?? lockPathOf(file);

/**
 * When process `pid` started: field 22 (starttime, clock ticks after boot) of
 * /proc/<pid>/stat, counted after the command name, which may itself hold spaces and ")".
 * Undefined where /proc cannot be read (not Linux, the process gone).
 */
function procStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields 3… follow the last ")": field 22 is the 20th of them.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** The owner record, when it is a file of the user's own (never through a link): another user's says nothing. */
async function readOwner(lock: string): Promise<LockOwner | undefined> {
  const read = await readPrivateFile(ownerPathOf(lock));
  if (read.kind !== "read") return undefined;
  try {
    const parsed = OwnerSchema.safeParse(JSON.parse(read.data.toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const LOCK_DIR = "the state file's directory";
const LOCK_PATH_DIR = "the lock's directory";

/**
 * Looks at the lock of `file` without touching it. Held: its owner runs on this host (or on
 * another host and refreshed it recently). Stale: its owner on this host is gone — its pid
 * is no process, or another process than the one that took the lock (it started at another
 * time: the pid was reused) — or nobody refreshed it for `staleMs`.
 */
export async function inspectLock(
  file: string,
  options: Pick<LockOptions, "staleMs" | "isAlive" | "clock" | "path" | "startTimeOf"> = {},
): Promise<LockInspection> {
  const staleMs = options.staleMs ?? 10_000;
  const isAlive = options.isAlive ?? processAlive;
  const startTimeOf = options.startTimeOf ?? procStartTime;
  const now = (options.clock ?? (() => new Date()))();
  const lockPath = lockOf(file, options);
  let mtime: Date;
  try {
    // Not followed: a link in the lock's place is no lock of a run's.
    const info = await lstat(lockPath);
    const uid = typeof process.geteuid === "function" ? process.geteuid() : undefined;
    if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) {
      return {
        state: "stale",
        owner: undefined,
        why: `${lockPath} is ${info.isDirectory() ? "a directory of another user's" : info.isSymbolicLink() ? "a symbolic link" : "not a directory"}, not a lock a run made`,
      };
    }
    mtime = info.mtime;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "free" };
    throw error;
  }
  const owner = await readOwner(lockPath);
  if (owner !== undefined && owner.host === hostname()) {
    if (!isAlive(owner.pid)) {
      return { state: "stale", owner, why: `process ${owner.pid} that took it is no longer running` };
    }
    const started = owner.startTime === undefined ? undefined : startTimeOf(owner.pid);
    if (started !== undefined && started !== owner.startTime) {
      return {
        state: "stale",
        owner,
        why: `process ${owner.pid} that took it is no longer running: that pid is another process now (it started at tick ${started}, the run at tick ${owner.startTime})`,
      };
    }
    return { state: "held", owner };
  }
  const age = now.getTime() - mtime.getTime();
  if (age > staleMs) {
    return {
      state: "stale",
      owner,
      why: `it was last refreshed ${Math.round(age / 1000)} s ago (its holder refreshes it every ${Math.round(staleMs / 2000)} s)`,
    };
  }
  return { state: "held", owner };
}

function describeOwner(owner: LockOwner | undefined): string {
  if (owner === undefined) return "a run whose owner is not recorded";
  return `${owner.name} (pid ${owner.pid} on ${owner.host}, since ${owner.since})`;
}

/**
 * Takes the lock of `file` (a directory `<file>.lock`, made atomically by proper-lockfile,
 * refreshed while held). A live holder is RUN_LOCKED; a stale lock is RUN_LOCK_STALE,
 * reported with its owner and how to clear it — it is never taken over here.
 */
export async function acquireLock(options: LockOptions): Promise<HeldLock> {
  const staleMs = options.staleMs ?? 10_000;
  const lockPath = lockOf(options.file, options);
  const refuse = async (inspection: LockInspection): Promise<never> => {
    if (inspection.state === "stale") {
      throw new UserError(
        errorCodes.RUN_LOCK_STALE,
        `${options.file} is locked by ${describeOwner(inspection.owner)}, which is no longer running`,
        {
          why: `${inspection.why}: that run was killed or crashed before it released the lock, and a lock is never taken over silently`,
          next: `make sure no other run uses ${options.file}, then clear the lock (remove ${lockPath})`,
          facts: {
            lock: lockPath,
            stateFile: options.file,
            ...(inspection.owner === undefined ? {} : { ownerPid: inspection.owner.pid }),
          },
        },
      );
    }
    const owner = inspection.state === "held" ? inspection.owner : undefined;
    throw new UserError(errorCodes.RUN_LOCKED, `another run is in progress: ${describeOwner(owner)}`, {
      why: `it holds the lock ${lockPath}, and two runs on one machine would interleave their changes`,
      next: "wait for it to finish, then check its result",
      facts: {
        lock: lockPath,
        stateFile: options.file,
        ...(owner === undefined ? {} : { ownerPid: owner.pid }),
      },
    });
  };

  // The lock is only as safe as its directory: another user who may write there could fake or remove it.
  await ensurePrivateDir(dirname(options.file), { mode: 0o700, what: LOCK_DIR });
  if (options.path !== undefined) await ensurePrivateDir(dirname(lockPath), { mode: 0o700, what: LOCK_PATH_DIR });
  const found = await inspectLock(options.file, options);
  if (found.state !== "free") return refuse(found);

  const { lock } = await import("proper-lockfile");
  let release: () => Promise<void>;
  try {
    release = await lock(options.file, {
      realpath: false,
      lockfilePath: lockPath,
      // The lock appeared between the look and the take: another run was faster. Stale
      // locks were refused above, so the library never removes one of ours to take it.
      retries: 0,
      stale: Math.max(staleMs, 2_000),
      onCompromised: (error) => options.onCompromised?.(error),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOCKED") {
      return refuse(await inspectLock(options.file, options));
    }
    throw error;
  }
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    name: options.name,
    since: (options.clock ?? (() => new Date()))().toISOString(),
    runId: options.runId,
  };
  const startTime = (options.startTimeOf ?? procStartTime)(process.pid);
  if (startTime !== undefined) owner.startTime = startTime;
  try {
    await writeFileSafe(ownerPathOf(lockPath), `${JSON.stringify(owner)}\n`, {
      mode: 0o600,
      what: "the lock's owner record",
    });
  } catch (error) {
    await release().catch(() => {});
    throw error;
  }
  return {
    owner,
    async release() {
      await rm(ownerPathOf(lockPath), { force: true });
      await release().catch(() => {});
    },
  };
}

/**
 * Clears a stale lock: only when it is stale (its owner is gone), never a held one
 * (RUN_LOCKED). Returns what was cleared, or undefined when there was no lock.
 */
export async function breakStaleLock(
  file: string,
  options: Pick<LockOptions, "staleMs" | "isAlive" | "clock" | "path" | "startTimeOf"> = {},
): Promise<LockInspection | undefined> {
  const lockPath = lockOf(file, options);
  await assertTrustedDir(dirname(lockPath), { own: true, what: options.path === undefined ? LOCK_DIR : LOCK_PATH_DIR });
  const found = await inspectLock(file, options);
  if (found.state === "free") return undefined;
  if (found.state === "held") {
    throw new UserError(errorCodes.RUN_LOCKED, `another run is in progress: ${describeOwner(found.owner)}`, {
      why: "its owner is still running, so its lock is not stale and is not cleared",
      next: "wait for it to finish",
      facts: { lock: lockPath, stateFile: file },
    });
  }
  await rm(lockPath, { recursive: true, force: true });
  await rm(ownerPathOf(lockPath), { force: true });
  return found;
}
