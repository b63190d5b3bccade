import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Socket } from "node:net";

// The one supervisor of the test tier's background processes: `testenv up`'s control plane,
// the sandbox's emulator supervisor, the emulators' own processes, the registries and the
// tenant API servers. What it does: run a program to its end, start one detached and wait
// until it is ready, stop one (SIGTERM, then SIGKILL), kill what a dead supervisor left
// (its `pids` file), notice that the process that started this one is gone, and a watchdog
// that outlives a `kill -9`.

export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  /** Each stderr line as it comes (progress of a long step). */
  onStderrLine?: (line: string) => void;
  /** Default 120 s; 0: none. */
  timeoutMs?: number;
}

/** Runs a program to its end; never rejects (a program that cannot start is exit code 127). */
export function runProcess(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      timeout: options.timeoutMs ?? 120_000,
    });
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (options.onStderrLine === undefined) return;
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) options.onStderrLine(line);
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    child.on("error", (error) => resolve({ exitCode: 127, stdout, stderr: `${stderr}${error.message}\n` }));
    child.on("close", (exitCode) => {
      if (partial && options.onStderrLine) options.onStderrLine(partial);
      resolve({ exitCode, stdout, stderr });
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Whether a process runs: it exists (one of another user counts: signal 0 is refused with
 * EPERM) and is no zombie. A process that exited but that nobody has reaped yet still
 * answers signal 0: the detached supervisors are orphans, and the init that adopts them may
 * reap seconds late, or never.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(pid);
}

/** A process's state letter and parent, from /proc (Linux); undefined elsewhere, or when it is gone. */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const [state = "", ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number.isInteger(Number(ppid)) ? { state, ppid: Number(ppid) } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an existing process is a zombie: from /proc (Linux), else from ps. */
function isZombie(pid: number): boolean {
  const stat = statOf(pid);
  if (stat !== undefined) return stat.state === "Z";
  try {
    return execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" })
      .trim()
      .startsWith("Z");
  } catch {
    return false;
  }
}

/** The command name of a PID, to be sure a PID from a file is still the process we started. */
export function commandOf(pid: number): string {
  try {
    return execFileSync("ps", ["-o", "comm=", "-p", String(pid)], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

/** Waits until the process has exited (reaped or not: see isAlive). */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

/** SIGTERM, and SIGKILL when it is still there after `graceMs`. Whether it was running. */
export async function terminate(
  pid: number,
  options: { graceMs: number; what: string; log?: (line: string) => void },
): Promise<boolean> {
  if (!isAlive(pid)) return false;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return false;
  }
  if (!(await waitForExit(pid, options.graceMs))) {
    options.log?.(`${options.what} (pid ${pid}) did not stop within ${options.graceMs / 1000} s; killing it`);
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
    await waitForExit(pid, 5_000);
  }
  return true;
}

/** `<pid> <name>` lines, as startControlPlane writes its `pids` file; a missing file is no processes. */
export async function readPidsFile(path: string): Promise<Array<{ pid: number; name: string }>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return [];
  }
  return text
    .trim()
    .split("\n")
    .map((line) => {
      const [pid = "", name = ""] = line.split(" ");
      return { pid: Number(pid), name };
    })
    .filter((entry) => entry.pid > 0 && entry.name !== "");
}

/**
 * Kills (SIGKILL) the processes a `pids` file lists that still run — those a supervisor
 * killed outright left behind. A PID that now belongs to another program is left alone.
 */
export async function killLeftovers(pidsFile: string, log: (line: string) => void, whose = ""): Promise<void> {
  for (const { pid, name } of await readPidsFile(pidsFile)) {
    if (!isAlive(pid)) continue;
    const command = commandOf(pid);
    if (!command || !name.startsWith(command)) continue;
    log(`killing leftover ${name}${whose} (pid ${pid})`);
    process.kill(pid, "SIGKILL");
    await waitForExit(pid, 5_000);
  }
}

/** Last lines of a log, for an error that says what to look at. */
export async function tail(path: string, lines = 15): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

export interface StartDetachedOptions<T> {
  command: string;
  args: readonly string[];
  /** Its stdout and stderr, appended. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  /** What the started process made known once it is ready (its state file, say); undefined until then. */
  ready: (pid: number) => Promise<T | undefined>;
  timeoutMs: number;
}

/**
 * Starts a program in its own session (it outlives this process) and waits until `ready`
 * gives something. A program that exits first, or is not ready in time, is stopped and the
 * error carries the last lines of its log.
 */
export async function startDetached<T>(options: StartDetachedOptions<T>): Promise<T> {
  const fd = openSync(options.logFile, "a");
  const child = spawn(options.command, options.args, {
    detached: true,
    stdio: ["ignore", fd, fd],
    env: options.env ?? process.env,
  });
  closeSync(fd);
  child.unref();
  const pid = child.pid ?? 0;
  const deadline = Date.now() + options.timeoutMs;
  while (Date.now() < deadline) {
    const value = pid > 0 ? await options.ready(pid) : undefined;
    if (value !== undefined) return value;
    if (child.exitCode !== null || child.signalCode !== null || pid === 0 || !isAlive(pid)) break;
    await sleep(100);
  }
  if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGTERM");
  throw new NotReadyError(options.logFile, await tail(options.logFile, 20));
}

/** A detached program that did not become ready: its log's last lines. */
export class NotReadyError extends Error {
  override readonly name = "NotReadyError";
  readonly logFile: string;
  readonly logTail: string;

  constructor(logFile: string, logTail: string) {
    super(`last lines of ${logFile}:\n${logTail}`);
    this.logFile = logFile;
    this.logTail = logTail;
  }
}

// Kills the processes listed in DIR/pids (SIGTERM, then SIGKILL after 5 s) and removes DIR
// once the process that started it is gone, however it went (SIGKILL included): a detached sh
// whose stdin is a pipe from that process. `read` waits without running anything and ends at
// the pipe's end-of-file, which comes when the process exits: the kernel closes a process's
// files when it exits, before anyone reaps it, so a parent left a zombie counts as gone too.
// (It polled `kill -0` and ps once a second before: ~8,000 ps, sh and sleep processes a test run.)
// The daemons it stops are then orphans, which an init may reap late: a zombie counts as stopped.
const watchdogScript = `
dir=$1
running() { kill -0 "$1" 2>/dev/null && ! ps -o stat= -p "$1" 2>/dev/null | grep -q Z; }
while read -r _; do :; done
pids=$(cut -d' ' -f1 "$dir/pids" 2>/dev/null)
if [ -n "$pids" ]; then
  kill -TERM $pids 2>/dev/null
  i=0
  while [ $i -lt 50 ]; do
    up=; for p in $pids; do running "$p" && up=1; done
    [ -z "$up" ] && break
    sleep 0.1; i=$((i + 1))
  done
  kill -KILL $pids 2>/dev/null
fi
rm -rf "$dir"
`;

export interface Watchdog {
  /** Stops the watchdog: `dir` was cleaned up in order. */
  dismiss(): void;
}

/** The watchdog of `dir` (see above); `name` shows in ps. */
export function spawnWatchdog(dir: string, name: string): Watchdog {
  const child = spawn("sh", ["-c", watchdogScript, name, dir], {
    detached: true,
    // Its stdin: the pipe whose end is this process's exit. Node opens it close-on-exec, so
    // no other child of this process holds it open.
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.unref();
  // Neither the pipe nor the child keeps this process's event loop alive.
  (child.stdin as Socket | null)?.unref();
  return {
    dismiss() {
      if (child.pid === undefined) return;
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      child.stdin?.destroy();
    },
  };
}

/** Stops a child of this process: SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface UntilStoppedOptions {
  /** Also stop when this process is gone (a zombie counts as gone). */
  owner?: number;
  /**
   * Also stop when the process that started this one is gone, or its parent: started as
   * `pnpm x` (pnpm → sh → node), a kill -9 of pnpm leaves the shell alive. Give the
   * `parentsNow()` read first thing in the process: read only when this is called, a
   * grandparent killed in between is already gone, and the one read is whoever reaped.
   */
  watchParents?: boolean | Parents;
  /** Settles with a reason to stop (a daemon that exited, say). */
  also?: Promise<string>;
  /** How often the processes are looked at (default 1 s). */
  intervalMs?: number;
}

/** This process's parent and grandparent, as they are now. */
export interface Parents {
  parent: number;
  grandparent: number | undefined;
}

export function parentsNow(): Parents {
  return { parent: process.ppid, grandparent: statOf(process.ppid)?.ppid };
}

/**
 * Resolves with why this process should stop: SIGTERM, SIGINT or SIGHUP; its IPC channel
 * closed (the parent that opened it died, however it died); the owner, the parent or the
 * grandparent gone; or `also`. The signal listeners stay (`on`, not `once`): a second signal
 * while stopping must not kill the process before it has stopped what it runs.
 */
export function untilStopped(options: UntilStoppedOptions = {}): Promise<string> {
  return new Promise((resolve) => {
    let finished = false;
    const finish = (why: string) => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      resolve(why);
    };
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => finish(signal));
    if (process.channel) {
      process.channel.unref();
      process.once("disconnect", () => finish("the parent process is gone (its IPC channel closed)"));
    }
    void options.also?.then(finish);
    const parents = options.watchParents === true ? parentsNow() : options.watchParents || undefined;
    const timer = setInterval(() => {
      if (options.owner !== undefined && !isAlive(options.owner)) finish(`owner process ${options.owner} is gone`);
      if (parents === undefined) return;
      const { parent, grandparent } = parents;
      if (process.ppid !== parent) finish(`the parent process ${parent} is gone`);
      else if (grandparent !== undefined && grandparent > 1 && !isAlive(grandparent))
        finish(`the process that started it (${grandparent}) is gone`);
    }, options.intervalMs ?? 1_000);
  });
}
