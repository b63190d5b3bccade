import { spawn } from "node:child_process";

export interface SessionRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr as they came, interleaved. */
  output: string;
  timedOut: boolean;
}

export interface SessionOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Where the variables a command exports are kept for the next command. */
  stateFile: string;
  timeoutMs: number;
  /** Each chunk of output as it comes. */
  onOutput?: (chunk: string) => void;
  /** Aborting stops the command and everything it started (Ctrl-C of a walkthrough). */
  signal?: AbortSignal;
}

/**
 * Runs `command` with bash as a careful script would (`set -euo pipefail`), after the
 * variables earlier commands of the session exported; what it exports is kept for the next.
 * A guide's or walkthrough's steps are separate processes that share `export`s, as they
 * would in one terminal.
 */
export function runInSession(command: string, options: SessionOptions): Promise<SessionRun> {
  const script = [
    "set -euo pipefail",
    `[ -s "$NODEKIT_SESSION_STATE" ] && . "$NODEKIT_SESSION_STATE"`,
    command,
    // Only what ran to the end is kept: a failing command stops its walkthrough or guide anyway.
    `export -p > "$NODEKIT_SESSION_STATE"`,
  ].join("\n");
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], {
      cwd: options.cwd,
      env: { ...options.env, NODEKIT_SESSION_STATE: options.stateFile },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let output = "";
    let timedOut = false;
    // The whole process group: a command's own children (a --watch, a server) go with it.
    const stop = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    options.signal?.addEventListener("abort", stop, { once: true });
    const take = (chunk: string, into: "stdout" | "stderr") => {
      if (into === "stdout") stdout += chunk;
      else stderr += chunk;
      output += chunk;
      options.onOutput?.(chunk);
    };
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => take(chunk, "stdout"));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => take(chunk, "stderr"));
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ exitCode: 127, stdout, stderr: `${stderr}${error.message}\n`, output, timedOut });
    });
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", stop);
      resolve({ exitCode, stdout, stderr, output, timedOut });
    });
  });
}
