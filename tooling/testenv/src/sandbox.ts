import { execFileSync, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { resolveBinDir } from "./binaries.ts";
import { type ControlPlaneInfo, connectControlPlane } from "./client.ts";
import { type StartupTimings, startControlPlane } from "./control-plane.ts";
import { TestenvError } from "./errors.ts";
import type { ClientIdentity } from "./pki.ts";

// The background control plane of `testenv up`: a detached supervisor process (`testenv serve`)
// owns etcd and kube-apiserver; everything it knows is in the state directory.

export interface SandboxState {
  /** The supervisor's PID: `down` sends it SIGTERM. */
  pid: number;
  info: ControlPlaneInfo;
  pids: { etcd: number; kubeApiserver: number };
  timings: StartupTimings;
  startedAt: string;
}

export interface SandboxOptions {
  stateDir: string;
  /** Progress for people: stderr in the CLI. */
  log: (line: string) => void;
}

/** `$NODEKIT_TESTENV_STATE_DIR`, else `${XDG_STATE_HOME:-~/.local/state}/nodekit/testenv`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NODEKIT_TESTENV_STATE_DIR) return env.NODEKIT_TESTENV_STATE_DIR;
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(base, "nodekit", "testenv");
}

const paths = (stateDir: string) => ({
  state: join(stateDir, "state.json"),
  log: join(stateDir, "supervisor.log"),
  data: join(stateDir, "data"),
  pids: join(stateDir, "data", "pids"),
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Gone, or a zombie nobody reaps (an orphan under an init that does not reap answers kill -0). */
function isGone(pid: number): boolean {
  if (!isAlive(pid)) return true;
  try {
    return execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" })
      .trim()
      .startsWith("Z");
  } catch {
    return false;
  }
}

/** The running sandbox's state, or undefined when none runs (a stale state file counts as none). */
export async function readState(stateDir: string): Promise<SandboxState | undefined> {
  let text: string;
  try {
    text = await readFile(paths(stateDir).state, "utf8");
  } catch {
    return undefined;
  }
  const state = JSON.parse(text) as SandboxState;
  return isAlive(state.pid) ? state : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

/** The command name of a PID, to be sure a PID from a file is still the process we started. */
function commandOf(pid: number): string {
  try {
    return execFileSync("ps", ["-o", "comm=", "-p", String(pid)], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

/** Kills etcd/kube-apiserver left by a supervisor that died without stopping them, and removes the state. */
async function cleanUp(stateDir: string, log: (line: string) => void): Promise<void> {
  let listed: string[] = [];
  try {
    listed = readFileSync(paths(stateDir).pids, "utf8").trim().split("\n");
  } catch {
    // no daemons were started
  }
  for (const line of listed) {
    const [pidText, name] = line.split(" ");
    const pid = Number(pidText);
    if (!pid || !name || !isAlive(pid)) continue;
    const command = commandOf(pid);
    if (!command || !name.startsWith(command)) continue; // the PID now belongs to another program
    log(`killing leftover ${name} (pid ${pid})`);
    process.kill(pid, "SIGKILL");
    await waitForExit(pid, 5_000);
  }
  await rm(stateDir, { recursive: true, force: true, maxRetries: 3 });
}

export interface UpOptions extends SandboxOptions {
  binDir?: string;
  /** The command that runs the supervisor: `[node, cli.ts]`. */
  supervisor: string[];
  readyTimeoutMs?: number;
}

/** Starts the sandbox in the background unless it runs already; returns its state. */
export async function up(options: UpOptions): Promise<SandboxState> {
  const running = await readState(options.stateDir);
  if (running) {
    options.log(`already running at ${running.info.server} (pid ${running.pid})`);
    return running;
  }
  await cleanUp(options.stateDir, options.log);
  // Resolve (and if need be build) the binaries here, so their progress shows in this terminal.
  const binDir = await resolveBinDir({
    ...(options.binDir === undefined ? {} : { binDir: options.binDir }),
    log: options.log,
  });
  await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
  const p = paths(options.stateDir);
  const fd = openSync(p.log, "a");
  const [command, ...args] = options.supervisor;
  if (!command) throw new Error("no supervisor command");
  const child = spawn(command, [...args, "serve", "--bin-dir", binDir], {
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, NODEKIT_TESTENV_STATE_DIR: options.stateDir },
  });
  closeSync(fd);
  child.unref();
  const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
  while (Date.now() < deadline) {
    const state = await readState(options.stateDir);
    if (state) {
      const t = state.timings;
      options.log(
        `ready at ${state.info.server} in ${(t.totalMs / 1000).toFixed(1)} s (etcd + kube-apiserver to /readyz ${(t.readyMs / 1000).toFixed(1)} s, certificates ${t.pkiMs} ms)`,
      );
      return state;
    }
    if (child.exitCode !== null || child.signalCode !== null || (child.pid !== undefined && !isAlive(child.pid))) break;
    await sleep(100);
  }
  const tail = readFileSync(p.log, "utf8").trimEnd().split("\n").slice(-20).join("\n");
  if (child.pid !== undefined && isAlive(child.pid)) process.kill(child.pid, "SIGTERM");
  throw new TestenvError("the control plane did not start", { why: `${p.log}:\n${tail}` });
}

export interface ServeOptions extends SandboxOptions {
  binDir?: string;
  /** Stop when this process is gone (tests set NODEKIT_TESTENV_OWNER_PID so an interrupted run leaves nothing). */
  ownerPid?: number;
}

/** The supervisor (`testenv serve`): runs the control plane until SIGTERM, then stops it and removes the state. */
export async function serve(options: ServeOptions): Promise<void> {
  const p = paths(options.stateDir);
  const plane = await startControlPlane({
    ...(options.binDir === undefined ? {} : { binDir: options.binDir }),
    dataDir: p.data,
    log: options.log,
  });
  const state: SandboxState = {
    pid: process.pid,
    info: plane.info,
    pids: plane.pids,
    timings: plane.timings,
    startedAt: new Date().toISOString(),
  };
  await writeFile(`${p.state}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${p.state}.tmp`, p.state);

  await new Promise<void>((resolvePromise) => {
    let finished = false;
    const finish = (why: string) => {
      if (finished) return;
      finished = true;
      options.log(`stopping: ${why}`);
      resolvePromise();
    };
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, () => finish(signal));
    void plane.exited.then((name) => finish(`${name} exited`));
    const { ownerPid } = options;
    if (ownerPid !== undefined) {
      const timer = setInterval(() => {
        if (!isGone(ownerPid)) return;
        clearInterval(timer);
        finish(`owner process ${ownerPid} is gone`);
      }, 1_000);
      timer.unref();
    }
  });
  await plane.stop();
  await rm(p.state, { force: true });
}

/** Stops the sandbox (if any) and leaves no process, port or state behind. */
export async function down(options: SandboxOptions): Promise<boolean> {
  const state = await readState(options.stateDir);
  if (state) {
    process.kill(state.pid, "SIGTERM");
    if (!(await waitForExit(state.pid, 20_000))) {
      options.log(`supervisor ${state.pid} did not stop within 20 s; killing it`);
      process.kill(state.pid, "SIGKILL");
      await waitForExit(state.pid, 5_000);
    }
  }
  await cleanUp(options.stateDir, options.log);
  return state !== undefined;
}

/** A kubeconfig for an identity on the running sandbox. */
export async function kubeconfig(options: SandboxOptions & { identity: ClientIdentity }): Promise<string> {
  const state = await readState(options.stateDir);
  if (!state) {
    throw new TestenvError("testenv is not running", { next: ["start it with `pnpm testenv up`"] });
  }
  return (await connectControlPlane(state.info)).kubeconfigFor(options.identity);
}
