import { type CommandCall, type CommandResult, formatCall } from "./call.ts";
import { childEnv } from "./env.ts";
import type { Redactor } from "./redactor.ts";

export interface RunOptions {
  /** Resolve with the non-zero exit code instead of rejecting. */
  allowFailure?: boolean;
}

/** The one seam through which libraries run programs. Tests and dry runs pass their own. */
export interface ProcessRunner {
  run(call: CommandCall, options?: RunOptions): Promise<CommandResult>;
}

/** A program exited non-zero (or could not start). Its output is redacted. */
export class CommandFailedError extends Error {
  override readonly name = "CommandFailedError";
  readonly commandLine: string;
  readonly exitCode: number | undefined;
  readonly stderr: string;
  readonly notFound: boolean;
  /** The signal that ended the program (SIGINT when Ctrl-C reached its process group), if one did. */
  readonly signal: string | undefined;
  constructor(commandLine: string, exitCode: number | undefined, stderr: string, notFound: boolean, signal?: string) {
    const tail = stderr ? `: ${stderr.trim().split("\n").slice(-5).join("\n")}` : "";
    super(
      notFound
        ? `${commandLine.split(" ")[0]} was not found on PATH`
        : exitCode === undefined && signal
          ? `${commandLine} was stopped by ${signal}${tail}`
          : `${commandLine} exited with code ${exitCode}${tail}`,
    );
    this.commandLine = commandLine;
    this.exitCode = exitCode;
    this.stderr = stderr;
    this.notFound = notFound;
    this.signal = signal;
  }
}

export interface ExecaRunnerOptions {
  redactor?: Redactor;
  /** Called with the redacted command line before each call (the CLI logs it under -v). */
  onCall?: (commandLine: string) => void;
  /**
   * The environment children are started from (default process.env). A child gets only its
   * allow-listed part plus what the call asks for: see INHERITED_ENV.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The real runner. execa is imported on first use, so commands that run nothing never load it. */
export function createExecaRunner(options: ExecaRunnerOptions = {}): ProcessRunner {
  return {
    async run(call, runOptions = {}) {
      const commandLine = formatCall(call, options.redactor);
      options.onCall?.(commandLine);
      const { execa } = await import("execa");
      const result = await execa(call.command, [...call.args], {
        reject: false,
        ...(call.cwd === undefined ? {} : { cwd: call.cwd }),
        env: childEnv(options.env ?? process.env, call),
        extendEnv: false,
        ...(call.input === undefined ? { stdin: "ignore" as const } : { input: call.input }),
        stripFinalNewline: false,
      });
      const redact = (text: string) => (options.redactor ? options.redactor.redact(text) : text);
      const stdout = typeof result.stdout === "string" ? result.stdout : "";
      const stderr = redact(typeof result.stderr === "string" ? result.stderr : "");
      const notFound = (result as { code?: string }).code === "ENOENT";
      const exitCode = result.exitCode ?? (notFound ? 127 : 1);
      if (exitCode !== 0 && !runOptions.allowFailure) {
        throw new CommandFailedError(commandLine, result.exitCode, stderr, notFound, result.signal ?? undefined);
      }
      return { exitCode, stdout, stderr };
    },
  };
}

export interface RecordedCall {
  call: CommandCall;
  /** The redacted, shell-quoted line: what a dry run prints for the same call. */
  line: string;
}

export interface RecordingRunner extends ProcessRunner {
  readonly calls: readonly RecordedCall[];
}

/**
 * A test witness: records every call in order, then hands it to `inner` (a real runner, so
 * the real plan runs) or, without one, answers it with `respond(call)` (default: success,
 * empty output). A test compares what was recorded with what the dry run printed.
 */
export function createRecordingRunner(
  options: {
    inner?: ProcessRunner;
    redactor?: Redactor;
    respond?: (call: CommandCall) => CommandResult | undefined;
  } = {},
): RecordingRunner {
  const calls: RecordedCall[] = [];
  return {
    calls,
    async run(call, runOptions) {
      calls.push({ call, line: formatCall(call, options.redactor) });
      if (options.inner) return options.inner.run(call, runOptions);
      return options.respond?.(call) ?? { exitCode: 0, stdout: "", stderr: "" };
    },
  };
}
