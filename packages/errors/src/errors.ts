import type { ErrorCode } from "./catalogue.ts";
import type { ExitCodeValue } from "./exit-codes.ts";
import { formatProblem, type Problem } from "./problem.ts";

/** Facts about a failure that a caller may act on (a site's name, a file's path); never a secret. */
export type ErrorFacts = Readonly<Record<string, string | number | boolean>>;

export interface UserErrorOptions {
  /** Why it happened, when that is not obvious from the message. */
  why?: string | undefined;
  /** What the user can do next; each entry is one step. Libraries state tool-neutral steps; a CLI adds its own. */
  next?: string | string[] | undefined;
  /** Problems with locations, for invalid input. */
  problems?: Problem[] | undefined;
  /** Facts a CLI's hints (or a platform team's code) may use: `{ site: "lab" }`. Never secrets. */
  facts?: ErrorFacts | undefined;
  cause?: unknown;
}

/**
 * A failure the user can act on: what happened (the message), why, and what to do
 * next. The CLIs print it without a stack trace and exit with its code's exit code.
 * Its code comes from a package's table (`defineErrorCodes`), which fixes the exit code
 * and is what docs/errors.md lists.
 */
export class UserError extends Error {
  override readonly name = "UserError";
  /** The permanent name, e.g. SITESPEC_INVALID. */
  readonly code: string;
  readonly errorCode: ErrorCode;
  readonly why: string | undefined;
  readonly next: string[];
  readonly exitCode: ExitCodeValue;
  readonly problems: Problem[];
  readonly facts: ErrorFacts;

  constructor(code: ErrorCode, message: string, options: UserErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code.code;
    this.errorCode = code;
    this.exitCode = code.exitCode;
    this.why = options.why;
    this.next = options.next === undefined ? [] : Array.isArray(options.next) ? options.next : [options.next];
    this.problems = options.problems ?? [];
    this.facts = options.facts ?? {};
  }
}

/**
 * A broken invariant inside the tool: a bug, never the user's fault. The CLIs report it
 * as one (exit 70, INTERNAL) with what was expected.
 */
export class BugError extends Error {
  override readonly name = "BugError";
}

export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}

/** Build the user error for invalid input from a list of problems (warnings are left out). */
export function invalidInput(
  code: ErrorCode,
  source: string,
  problems: Problem[],
  next?: string | string[],
  outcome = "nothing was written",
): UserError {
  const errors = problems.filter((p) => p.severity === "error");
  const noun = errors.length === 1 ? "problem" : "problems";
  return new UserError(code, `${source} has ${errors.length} ${noun}; ${outcome}`, {
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
