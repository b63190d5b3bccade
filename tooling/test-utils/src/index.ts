import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { UserError } from "@nodekit/errors";

export { FUZZ_RUNS, fuzzBytes, fuzzText, problemsAreLocated } from "./fuzz.ts";
export {
  type BoundedRun,
  type BoundedRunOptions,
  type FaultInput,
  FILE_FAULTS,
  runBounded,
  STDIN_FAULTS,
  type StdinFault,
  summarize,
} from "./input-faults.ts";
export { modulesLoadedAfter, portOpen, processAlive } from "./processes.ts";
export { loopbackServers } from "./servers.ts";
export { type FileEntry, type FileTree, type TestDir, type TestDirOptions, testdir } from "./testdir.ts";
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
}

/**
 * Run a built CLI (`apps/<name>/bin/run.js`) as a subprocess with the same Node that runs
 * the tests, as a user would: the test reads stdout, stderr and the exit code.
 * The environment is minimal and isolated (HOME and XDG dirs point wherever the test
 * says), so a developer's own config never leaks into a test.
 */
export function runCli(cli: "nr" | "nvkectl", args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  const bin = join(repoRoot, "apps", cli, "bin", "run.js");
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", NO_COLOR: "1" };
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd ?? repoRoot,
      env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      timeout: options.timeoutMs ?? 60_000,
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
    child.on("close", (exitCode) => resolvePromise({ exitCode, stdout, stderr }));
  });
}

/** A fresh temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix = "nodekit-test-"): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

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
