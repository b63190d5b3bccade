import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { UserError } from "@nodekit/errors";
import { inProcessBusy, runInProcess } from "./in-process.ts";
import { goRuntimeEnv, runProcess } from "./processes.ts";

export {
  everyFuzzRun,
  FUZZ_RUNS,
  fuzzBytes,
  fuzzText,
  mostly,
  mutatedJson,
  mutatedValues,
  problemsAreLocated,
} from "./fuzz.ts";
export { inProcessBusy, runInProcess } from "./in-process.ts";
export {
  type BoundedRun,
  type BoundedRunOptions,
  expectBounded,
  FAULT_BOUNDS,
  type FaultInput,
  FILE_FAULTS,
  runBounded,
  STDIN_FAULTS,
  type StdinFault,
  summarize,
} from "./input-faults.ts";
export { tokenKubeconfig } from "./kubeconfig.ts";
export {
  deadPid,
  goRuntimeEnv,
  type HoldingChild,
  holdingChild,
  modulesLoadedAfter,
  type ProcessResult,
  portOpen,
  processAlive,
  runProcess,
} from "./processes.ts";
export { loopbackServers, portPicker, squattedPort } from "./servers.ts";
export { sink } from "./sink.ts";
export {
  type ConfigHome,
  configHome,
  type FileEntry,
  type FileTree,
  type TestDir,
  type TestDirOptions,
  testdir,
} from "./testdir.ts";
export { type OtherUser, type OtherUserLookup, otherUser } from "./users.ts";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export interface CliResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  input?: string;
  timeoutMs?: number;
  /**
   * Run the CLI as a process of its own even where it could run in this one: what a test of
   * the process itself needs (signals, EPIPE, the launcher, stdin, module loads, a run that must be killed).
   */
  spawn?: boolean;
}

/**
 * Run a built CLI as a user would and return its stdout, stderr and exit code. The
 * environment is minimal and isolated (HOME and XDG dirs point wherever the test says), so a
 * developer's own config never leaks into a test. The run is in this process (the bundle
 * loaded once, ./in-process.ts) unless it needs a process of its own: standard input, a
 * timeout, a NODE_* variable (Node.js reads those as it starts), `spawn: true`, another run already in progress here, or
 * NODEKIT_TEST_SPAWN=1 in the test's environment (every CLI run a subprocess, as a check).
 */
export async function runCli(cli: "nr" | "nvkectl", args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...goRuntimeEnv() };
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
  const ownProcess =
    options.spawn === true ||
    options.input !== undefined ||
    options.timeoutMs !== undefined ||
    Object.keys(env).some((key) => key.startsWith("NODE_")) ||
    process.env.NODEKIT_TEST_SPAWN === "1" ||
    inProcessBusy();
  if (!ownProcess) return runInProcess(join(repoRoot, "apps", cli), args, { env, cwd: options.cwd ?? repoRoot });
  return spawnCli(cli, args, env, options);
}

/** A built CLI (`apps/<name>/bin/run.js`) as a subprocess with the same Node that runs the tests. */
async function spawnCli(
  cli: "nr" | "nvkectl",
  args: string[],
  env: Record<string, string>,
  options: RunCliOptions,
): Promise<CliResult> {
  const { exitCode, stdout, stderr } = await runProcess(
    process.execPath,
    [join(repoRoot, "apps", cli, "bin", "run.js"), ...args],
    { cwd: options.cwd ?? repoRoot, env, input: options.input, timeoutMs: options.timeoutMs ?? 60_000 },
  );
  return { exitCode, stdout, stderr };
}

/** A fresh temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix = "nodekit-test-"): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** Whether `path` exists (resolves false where it cannot be reached). */
export const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Retries `fn` until it stops throwing, for state that settles asynchronously (RBAC
 * caches, CRD handlers, a controller's provisioning); past `timeoutMs` its last error is thrown.
 */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 15_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/** The UserError `promise` rejects with; any other outcome fails the test (another error is rethrown as it is). */
export async function userErrorOf(promise: Promise<unknown>): Promise<UserError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
  throw new Error("expected a UserError, but the promise resolved");
}
