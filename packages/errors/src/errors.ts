import { ExitCode, type ExitCodeValue } from "./exit-codes.ts";
import { formatProblem, type Problem } from "./problem.ts";

export interface UserErrorOptions {
  /** Why it happened, when that is not obvious from the message. */
  why?: string;
  /** What the user can do next; each entry is one step. */
  next?: string | string[];
  /** The documented exit code for this failure. */
  exitCode?: ExitCodeValue;
  /** Problems with locations, for invalid input. */
  problems?: Problem[];
  cause?: unknown;
}

/**
 * A failure the user can act on: what happened (the message), why, and what to do
 * next. The CLIs print it without a stack trace and exit with its exit code.
 * `code` is a permanent, documented name (e.g. SITESPEC_INVALID).
 */
export class UserError extends Error {
  override readonly name = "UserError";
  readonly code: string;
  readonly why: string | undefined;
  readonly next: string[];
  readonly exitCode: ExitCodeValue;
  readonly problems: Problem[];

  constructor(code: string, message: string, options: UserErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.why = options.why;
    this.next = options.next === undefined ? [] : Array.isArray(options.next) ? options.next : [options.next];
    this.exitCode = options.exitCode ?? ExitCode.CheckFailed;
    this.problems = options.problems ?? [];
  }
}

/** A broken invariant inside the tool: a bug, never the user's fault. */
export class BugError extends Error {
  override readonly name = "BugError";
}

export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}

/** Build the user error for invalid input from a list of problems (warnings are left out). */
export function invalidInput(code: string, source: string, problems: Problem[], next?: string | string[]): UserError {
  const errors = problems.filter((p) => p.severity === "error");
  const noun = errors.length === 1 ? "problem" : "problems";
  return new UserError(code, `${source} has ${errors.length} ${noun}; nothing was written`, {
    exitCode: ExitCode.InvalidInput,
    problems: errors,
    ...(next === undefined ? {} : { next }),
  });
}

/** Plain-text rendering used by the CLIs and by library callers that want the same look. */
export function formatUserError(error: UserError): string {
  const lines = [`error: ${error.message}`];
  for (const problem of error.problems) lines.push(`  ${formatProblem(problem)}`);
  if (error.why) lines.push(`why: ${error.why}`);
  for (const step of error.next) lines.push(`next: ${step}`);
  return lines.join("\n");
}
