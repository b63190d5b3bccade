import { type ChildProcessByStdio, spawn, spawnSync } from "node:child_process";
import { connect } from "node:net";
import type { Readable } from "node:stream";
import { GO_RUNTIME_ENV } from "@nodekit/process";

/**
 * The Go runtime's settings of the test run (@nodekit/process's GO_RUNTIME_ENV: GOGC and
 * GOMAXPROCS, which tooling/testenv/src/isolate.ts sets, and GOMEMLIMIT), for an environment a
 * test builds from nothing: the kubectl, helm and clusterctl calls of the CLIs, and the
 * daemons, then run as every Go program of the run does.
 */
export function goRuntimeEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const name of GO_RUNTIME_ENV) {
    const value = env[name];
    if (value !== undefined) settings[name] = value;
  }
  return settings;
}

/** A finished process: its exit code (null when a signal ended it), what it wrote, how long it took. */
export interface ProcessResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `file` to its end with stdout and stderr captured; standard input is `input`, else
 * none. The environment is `env` only (default: this process's).
 */
export function runProcess(
  file: string,
  args: readonly string[],
  options: {
    cwd?: string | undefined;
    env?: Record<string, string | undefined>;
    input?: string | undefined;
    timeoutMs?: number | undefined;
  } = {},
): Promise<ProcessResult> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    child.on("error", reject);
    child.on("close", (exitCode) => resolvePromise({ exitCode, stdout, stderr, ms: performance.now() - started }));
  });
}

/** A pid that was a process a moment ago and is none now: what a killed run leaves in its records. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid ?? 999_999;
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise<boolean>((resolvePromise) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolvePromise(true);
    });
    socket.once("error", () => resolvePromise(false));
  });
}

/**
 * The files a fresh Node process holds in its CommonJS cache after running `script` (the body
 * of an ES module, workspace packages resolved from source): how a test shows that importing a
 * package leaves a heavy dependency unloaded, and that the call needing it loads it. Throws
 * with the script's stderr when it fails.
 */
export function modulesLoadedAfter(script: string): string[] {
  const result = spawnSync(
    process.execPath,
    [
      "--conditions=source",
      "--input-type=module",
      "-e",
      `${script}\nconsole.log(JSON.stringify(Object.keys((await import("node:module")).createRequire(import.meta.url).cache)))`,
    ],
    { encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`the script exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout) as string[];
}

/** A child {@link holdingChild} started, and how it ends: its signal, else its exit code. */
export interface HoldingChild {
  child: ChildProcessByStdio<null, Readable, null>;
  exited: Promise<NodeJS.Signals | number | null>;
}

/**
 * A Node.js child running `script` (an ES module; the workspace's sources resolve), for a test
 * of what a process leaves while it holds something (a lock, a file) or when it is killed:
 * resolves once the script writes its first output, rejects when the child ends before.
 */
export async function holdingChild(script: string): Promise<HoldingChild> {
  const child = spawn(process.execPath, ["--conditions=source", "--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(signal ?? code)),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.once("data", () => resolve());
    void exited.then((how) => reject(new Error(`the child ended (${how}) before its first output`)));
  });
  return { child, exited };
}
