import type { Problem } from "@nodekit/errors";
import type * as z from "zod";
import type { FieldPath } from "./locate.ts";
import { readableMessage } from "./messages.ts";
import type { LocatedDocument } from "./read.ts";

export interface ValidateOptions {
  /** How problems name the input: the file path as the user gave it. */
  source: string;
}

export interface Validated<T> {
  /** The schema's output (defaults filled in, transforms applied); present exactly when `problems` is empty. */
  value?: T;
  /** Every problem, in line order, each with its field path, line and the offending value. */
  problems: Problem[];
}

/**
 * Check a document against a zod schema and turn every issue into a problem with its
 * field path, its line (when the document came from `readYamlDocuments`) and the value
 * found there, quoted when it is a scalar. A value built in code can be checked the same
 * way as `{ value }`; its problems carry no line.
 */
export function validateDocument<S extends z.ZodType>(
  schema: S,
  document: LocatedDocument | { readonly value: unknown },
  options: ValidateOptions,
): Validated<z.output<S>> {
  const result = schema.safeParse(document.value, { error: readableMessage });
  if (result.success) return { value: result.data, problems: [] };
  const lineOf = "lineOf" in document ? document.lineOf : undefined;
  const problems = fieldIssues(result.error.issues, []).map(({ path, message, quote }): Problem => {
    const problem: Problem = { severity: "error", source: options.source, message };
    const line = lineOf?.(path);
    if (line !== undefined) problem.line = line;
    if (path.length > 0) problem.path = path;
    // The document as a whole is never quoted: a file holding one long string says nothing by repeating it.
    const value = quote && path.length > 0 ? scalarAt(document.value, path) : undefined;
    if (value !== undefined) problem.value = value;
    return problem;
  });
  // Array.prototype.sort is stable: problems on one line keep zod's order.
  return { problems: problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)) };
}

interface FieldIssue {
  path: FieldPath;
  message: string;
  /** Whether to quote the value at `path` back: not an unknown field's, which may hold anything (a token, say). */
  quote: boolean;
}

/** zod issues → one entry per field: an unknown-keys issue names each key, a union names its closest form. */
function fieldIssues(issues: readonly z.core.$ZodIssue[], prefix: FieldPath): FieldIssue[] {
  return issues.flatMap((issue): FieldIssue[] => {
    const path = [...prefix, ...issue.path.filter((segment) => typeof segment !== "symbol")];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...path, key], message: issue.message, quote: false }));
    }
    // The key is what is wrong, and the path already shows it.
    if (issue.code === "invalid_key") return [{ path, message: issue.message, quote: false }];
    if (issue.code === "invalid_union" && issue.discriminator === undefined) {
      // One form got past the type check and the others did not: its problems are the useful ones.
      const candidates = issue.errors.filter((branch) => !branch.some(rulesOutForm));
      if (candidates.length === 1 && candidates[0] !== undefined) return fieldIssues(candidates[0], path);
    }
    return [{ path, message: issue.message, quote: true }];
  });
}

/**
 * An issue showing that the value was never meant to be this form of a union: the wrong
 * type altogether, or a different value for one of its own literal fields (`kind: A` is
 * not the `kind: B` form).
 */
function rulesOutForm(issue: z.core.$ZodIssue): boolean {
  if (issue.path.length === 0) return issue.code === "invalid_type" || issue.code === "invalid_value";
  return issue.path.length === 1 && issue.code === "invalid_value";
}

/** The value at `path`, when it is a scalar worth quoting back to the user (a number stays a number: `2 must be odd`). */
function scalarAt(document: unknown, path: FieldPath): string | number | boolean | undefined {
  let value: unknown = document;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string | number, unknown>)[segment];
  }
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return value;
  if (typeof value === "bigint") return String(value);
  return undefined;
}
