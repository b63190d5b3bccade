import { stripVTControlCharacters } from "node:util";
import { BugError, ExitCode, errorCodes, formatProblem, isUserError, type UserError } from "@nodekit/errors";
import { CommandFailedError, processErrorCodes } from "@nodekit/process";

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

/**
 * A CLI's own next steps for an error code, added after the library's: libraries state
 * facts and tool-neutral steps; the CLI knows its own commands (`nvkectl config set-site …`).
 */
export type Hints = Readonly<Record<string, (error: UserError) => readonly string[]>>;

export interface FailureContext {
  bin: string;
  version: string;
  hints?: Hints | undefined;
}

interface OclifLikeError {
  oclif?: { exit?: number };
  message: string;
}

/**
 * The one place where any error becomes what the user sees: a user error prints its
 * what/why/next (and the CLI's hints for its code) without a stack; a usage error points at
 * --help; anything else is reported once as a bug, with the stack only under -v.
 */
export function describeFailure(error: unknown, context: FailureContext): Failure {
  if (isUserError(error)) {
    const next = [...error.next, ...(context.hints?.[error.code]?.(error) ?? [])];
    const details = [
      ...error.problems.map((problem) => `  ${formatProblem(problem)}`),
      ...(error.why ? [`why: ${error.why}`] : []),
      ...next.map((step) => `next: ${step}`),
    ];
    const fields: Record<string, unknown> = { code: error.code, exitCode: error.exitCode };
    if (error.problems.length > 0) fields.problems = error.problems;
    if (error.why) fields.why = error.why;
    if (next.length > 0) fields.next = next;
    return { exitCode: error.exitCode, message: error.message, details, fields };
  }
  if (error instanceof CommandFailedError) {
    const code = error.notFound ? processErrorCodes.TOOL_NOT_FOUND : processErrorCodes.COMMAND_FAILED;
    const next = error.notFound
      ? `install ${error.commandLine.split(" ")[0]} and make sure it is on PATH`
      : "rerun with -v to see every command and its output";
    return {
      exitCode: code.exitCode,
      message: error.message,
      details: [`next: ${next}`],
      fields: { code: code.code, exitCode: code.exitCode, next: [next] },
    };
  }
  const oclifExit = (error as OclifLikeError | undefined)?.oclif?.exit;
  // A flag's own parser that refused its value: oclif rethrows its error as "Parsing --flag …".
  const flagParse = error instanceof Error ? FLAG_PARSE.exec(error.message) : null;
  if (
    error instanceof Error &&
    (flagParse !== null || (typeof oclifExit === "number" && oclifExit !== ExitCode.Internal))
  ) {
    // oclif's own parse errors (unknown flag, missing argument, bad option): usage errors.
    const exitCode =
      flagParse !== null || oclifExit === 1 || oclifExit === 2 ? ExitCode.Usage : (oclifExit ?? ExitCode.Usage);
    const next = `run ${context.bin} --help, or the command with --help, for usage`;
    return {
      exitCode,
      message: usageMessage(flagParse?.[1] ?? error.message),
      details: [`next: ${next}`],
      fields: { code: errorCodes.USAGE.code, exitCode, next: [next] },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  const stack = error instanceof Error ? error.stack : undefined;
  const invariant = error instanceof BugError;
  return {
    exitCode: errorCodes.INTERNAL.exitCode,
    message: invariant ? `internal error: ${message}` : `unexpected failure: ${message}`,
    details: [
      `why: this is a bug in ${context.bin} ${context.version}, not something you did`,
      "next: rerun with -v for the stack trace and report it with that output",
    ],
    fields: { code: errorCodes.INTERNAL.code, exitCode: errorCodes.INTERNAL.exitCode },
    ...(stack === undefined ? {} : { stack }),
  };
}

const FLAG_PARSE = /^Parsing --[\w-]+ \n\t([\s\S]*?)(?:\nSee more help with --help)?$/;

/**
 * oclif's parse error text in the house style: one line, lower case, no "The following error
 * occurred:" preamble and no "See more help with --help" (the next step says where help is).
 */
function usageMessage(text: string): string {
  const lines = stripVTControlCharacters(text)
    .replace(/\nSee more help with --help\s*$/, "")
    .replace(/^The following errors? occurred:\s*/, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => line.replace(/^Missing required flag (\S+)$/, "missing required flag --$1"));
  return lines.join("; ");
}
