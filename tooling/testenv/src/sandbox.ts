import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { binaries } from "./binaries.ts";
import { type ControlPlaneInfo, connectControlPlane } from "./client.ts";
import { type StartupTimings, startControlPlane } from "./control-plane.ts";
import { TestenvError } from "./errors.ts";
import type { ClientIdentity } from "./pki.ts";
import { isAlive, killLeftovers, NotReadyError, startDetached, terminate, untilStopped } from "./supervisor.ts";

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

/** Kills etcd/kube-apiserver left by a supervisor that died without stopping them, and removes the state. */
async function cleanUp(stateDir: string, log: (line: string) => void): Promise<void> {
  await killLeftovers(paths(stateDir).pids, log);
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
  const binDir = await binaries("kubernetes", {
    ...(options.binDir === undefined ? {} : { binDir: options.binDir }),
    log: options.log,
  });
  await mkdir(options.stateDir, { recursive: true, mode: 0o700 });
  const p = paths(options.stateDir);
  const [command, ...args] = options.supervisor;
  if (!command) throw new Error("no supervisor command");
  try {
    const state = await startDetached({
      command,
      args: [...args, "serve", "--bin-dir", binDir],
      logFile: p.log,
      env: { ...process.env, NODEKIT_TESTENV_STATE_DIR: options.stateDir },
      ready: () => readState(options.stateDir),
      timeoutMs: options.readyTimeoutMs ?? 120_000,
    });
    const t = state.timings;
    options.log(
      `ready at ${state.info.server} in ${(t.totalMs / 1000).toFixed(1)} s (etcd + kube-apiserver to /readyz ${(t.readyMs / 1000).toFixed(1)} s, certificates ${t.pkiMs} ms)`,
    );
    return state;
  } catch (error) {
    if (!(error instanceof NotReadyError)) throw error;
    throw new TestenvError("the control plane did not start", { why: `${p.log}:\n${error.logTail}` });
  }
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

  const why = await untilStopped({
    ...(options.ownerPid === undefined ? {} : { owner: options.ownerPid }),
    also: plane.exited.then((name) => `${name} exited`),
  });
  options.log(`stopping: ${why}`);
  await plane.stop();
  await rm(p.state, { force: true });
}

/** Stops the sandbox (if any) and leaves no process, port or state behind. */
export async function down(options: SandboxOptions): Promise<boolean> {
  const state = await readState(options.stateDir);
  if (state) await terminate(state.pid, { graceMs: 20_000, what: "supervisor", log: options.log });
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
