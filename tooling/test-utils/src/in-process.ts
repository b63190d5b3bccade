import { Console } from "node:console";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

// A built CLI run inside the test's own process (issue 25 item 5): the bundle's entry
// (apps/<cli>/dist/run.js, which is @nodekit/cli-kit's `run`) is loaded once per test worker and
// each call runs it with what a subprocess would have had of its own: the environment, the
// argv, the working directory, stdout and stderr (captured, not TTYs), and the exit (a
// process.exit throws out of the run instead of ending the worker). Everything is put back
// when the run ends. What a process alone can show (signals, EPIPE, the launcher's engine
// check, stdin, the start-up guard, a run that must be killed) stays with the subprocess runner.

export interface InProcessResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

interface CliEntry {
  run(binUrl: string, argv: string[]): Promise<void>;
}

const requireHere = createRequire(import.meta.url);

/** Thrown by the stand-in process.exit: the run ends here, with this code. */
class ProcessExit extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`process.exit(${code})`);
    this.code = code;
  }
}

let running = false;

/** Whether a run is in progress in this process: a second one at the same time needs a process of its own. */
export function inProcessBusy(): boolean {
  return running;
}

/** Process events a command may listen to; whatever a run added is removed when it ends. */
const PROCESS_EVENTS = ["SIGINT", "SIGTERM", "SIGHUP", "exit", "beforeExit", "warning"] as const;

export async function runInProcess(
  root: string,
  args: readonly string[],
  options: { env: Record<string, string>; cwd: string },
): Promise<InProcessResult> {
  if (running) throw new Error("runInProcess: a run is already in progress in this process");
  running = true;
  const entry = requireHere(join(root, "dist", "run.js")) as CliEntry;
  const binUrl = pathToFileURL(join(root, "bin", "run.js")).href;

  const saved = {
    env: { ...process.env },
    argv: process.argv,
    cwd: process.cwd(),
    exit: process.exit,
    exitCode: process.exitCode,
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
    stdoutTTY: Object.getOwnPropertyDescriptor(process.stdout, "isTTY"),
    stderrTTY: Object.getOwnPropertyDescriptor(process.stderr, "isTTY"),
    stdinTTY: Object.getOwnPropertyDescriptor(process.stdin, "isTTY"),
    umask: process.umask(),
    console: globalThis.console,
    listeners: PROCESS_EVENTS.map((event) => [event, process.listeners(event as NodeJS.Signals)] as const),
    stdoutListeners: process.stdout.listeners("error"),
  };
  process.umask(saved.umask);

  let stdout = "";
  let stderr = "";
  // The first process.exit ends the run: what code still runs on the way out (oclif's handler
  // printing the stand-in's throw, then exiting 1) would never have run in a process of its own.
  let exited: number | undefined;
  const capture =
    (append: (text: string) => void) =>
    (
      chunk: string | Uint8Array,
      encoding?: BufferEncoding | ((error?: Error | null) => void),
      callback?: () => void,
    ) => {
      if (exited === undefined) append(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      const done = typeof encoding === "function" ? encoding : callback;
      if (done) queueMicrotask(() => done());
      return true;
    };

  // The environment is replaced in place (not by a new object): Node's own lookups
  // (os.homedir(), child processes without an env) read the real one.
  for (const key of Object.keys(process.env)) delete process.env[key];
  // Node's compile cache can be turned on once per process, and this process is not the CLI's:
  // off, as NODE_DISABLE_COMPILE_CACHE=1 turns it off (tests of the cache run a process of their own).
  Object.assign(process.env, options.env, { NODE_DISABLE_COMPILE_CACHE: "1" });
  process.argv = [process.execPath, join(root, "bin", "run.js"), ...args];
  process.chdir(options.cwd);
  process.exitCode = undefined;
  process.exit = ((code?: number | string | null) => {
    exited ??= Number(code ?? process.exitCode ?? 0);
    throw new ProcessExit(exited);
  }) as typeof process.exit;
  process.stdout.write = capture((text) => {
    stdout += text;
  }) as typeof process.stdout.write;
  process.stderr.write = capture((text) => {
    stderr += text;
  }) as typeof process.stderr.write;
  Object.defineProperty(process.stdout, "isTTY", { value: false, configurable: true, writable: true });
  Object.defineProperty(process.stderr, "isTTY", { value: false, configurable: true, writable: true });
  Object.defineProperty(process.stdin, "isTTY", { value: false, configurable: true, writable: true });
  // The test runner's console reports to the runner; the CLI's (oclif writes with console.log) is its own stdout and stderr.
  globalThis.console = new Console({ stdout: process.stdout, stderr: process.stderr, colorMode: false });

  let exitCode: number;
  try {
    await entry.run(binUrl, [...args]);
    exitCode = exited ?? Number(process.exitCode ?? 0);
  } catch (error) {
    if (exited !== undefined) exitCode = exited;
    else {
      // What Node prints for an uncaught error, and its exit status.
      stderr += `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
      exitCode = 1;
    }
  } finally {
    globalThis.console = saved.console;
    process.stdout.write = saved.stdoutWrite;
    process.stderr.write = saved.stderrWrite;
    restoreProperty(process.stdout, "isTTY", saved.stdoutTTY);
    restoreProperty(process.stderr, "isTTY", saved.stderrTTY);
    restoreProperty(process.stdin, "isTTY", saved.stdinTTY);
    process.exit = saved.exit;
    process.exitCode = saved.exitCode;
    process.argv = saved.argv;
    process.chdir(saved.cwd);
    process.umask(saved.umask);
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, saved.env);
    for (const [event, before] of saved.listeners) {
      for (const listener of process.listeners(event as NodeJS.Signals)) {
        if (!before.includes(listener)) process.removeListener(event, listener as never);
      }
    }
    for (const listener of process.stdout.listeners("error")) {
      if (!saved.stdoutListeners.includes(listener)) process.stdout.removeListener("error", listener as never);
    }
    running = false;
  }
  return { exitCode, stdout, stderr };
}

function restoreProperty(target: object, key: string, descriptor: PropertyDescriptor | undefined): void {
  if (descriptor) Object.defineProperty(target, key, descriptor);
  else delete (target as Record<string, unknown>)[key];
}
