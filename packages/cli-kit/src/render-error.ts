import { ExitCode, formatProblem, isUserError } from "@nodekit/errors";
import { CommandFailedError } from "@nodekit/process";

export interface Failure {
  exitCode: number;
  message: string;
  /** Lines for people under the message: problems, why, next steps. */
  details: string[];
  /** The same facts for --json-logs. */
  fields: Record<string, unknown>;
  /** Shown under -v only, for bugs. */
  stack?: string;
}

interface OclifLikeError {
  oclif?: { exit?: number };
  message: string;
}

/**
 * The one place where any error becomes what the user sees: a user error prints its
 * what/why/next without a stack; a usage error points at --help; anything else is
 * reported once as a bug, with the stack only under -v.
 */
export function describeFailure(error: unknown, context: { bin: string; version: string }): Failure {
  if (isUserError(error)) {
    const details = [
      ...error.problems.map((problem) => `  ${formatProblem(problem)}`),
      ...(error.why ? [`why: ${error.why}`] : []),
      ...error.next.map((step) => `next: ${step}`),
    ];
    const fields: Record<string, unknown> = { code: error.code, exitCode: error.exitCode };
    if (error.problems.length > 0) fields.problems = error.problems;
    if (error.why) fields.why = error.why;
    if (error.next.length > 0) fields.next = error.next;
    return { exitCode: error.exitCode, message: error.message, details, fields };
  }
  if (error instanceof CommandFailedError) {
    const exitCode = error.notFound ? ExitCode.Precondition : ExitCode.CheckFailed;
    const next = error.notFound
      ? `install ${error.commandLine.split(" ")[0]} and make sure it is on PATH`
      : "rerun with -v to see every command and its output";
    return {
      exitCode,
      message: error.message,
      details: [`next: ${next}`],
      fields: { code: error.notFound ? "TOOL_NOT_FOUND" : "COMMAND_FAILED", exitCode, next: [next] },
    };
  }
  const oclifExit = (error as OclifLikeError | undefined)?.oclif?.exit;
  if (typeof oclifExit === "number" && oclifExit !== ExitCode.Internal && error instanceof Error) {
    // oclif's own parse errors (unknown flag, missing argument, bad option): usage errors.
    const exitCode = oclifExit === 1 || oclifExit === 2 ? ExitCode.Usage : oclifExit;
    const next = `run ${context.bin} --help, or the command with --help, for usage`;
    return {
      exitCode,
      message: error.message.trim(),
      details: [`next: ${next}`],
      fields: { code: "USAGE", exitCode, next: [next] },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  const stack = error instanceof Error ? error.stack : undefined;
  return {
    exitCode: ExitCode.Internal,
    message: `unexpected failure: ${message}`,
    details: [
      `why: this is a bug in ${context.bin} ${context.version}, not something you did`,
      "next: rerun with -v for the stack trace and report it with that output",
    ],
    fields: { code: "INTERNAL", exitCode: ExitCode.Internal },
    ...(stack === undefined ? {} : { stack }),
  };
}
