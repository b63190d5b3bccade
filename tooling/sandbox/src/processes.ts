import { execFileSync, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";

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
  timeoutMs?: number;
}

/** Runs a program to its end; never rejects for a non-zero exit (the caller decides). */
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

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(100);
  }
  return !isAlive(pid);
}

/** `<pid> <name>` lines (testenv's `pids` file); a missing file is no processes. */
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

/** Last lines of a log, for an error that says what to look at. */
export async function tail(path: string, lines = 15): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
