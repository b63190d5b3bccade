import { formatPath, type Problem } from "@nodekit/errors";
import type * as z from "zod";
import type { ApiErrorDetail } from "./schemas.ts";

export interface ParseRequestOptions {
  /** The file (or other input) name to put in problems, as the user gave it. */
  source: string;
}

export interface ParsedRequest<T> {
  /** The validated request (defaults applied); present exactly when `problems` is empty. */
  value?: T;
  /** Every problem found, each with its field path and the offending value. */
  problems: Problem[];
}

/**
 * Validates a request document (already read from YAML or JSON) against one of the
 * request schemas, the same way the controller does, and reports every problem at once.
 * Pure: it reads nothing and throws nothing for invalid input.
 */
export function parseRequest<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: ParseRequestOptions,
): ParsedRequest<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { value: result.data, problems: [] };
  return { problems: issuesToProblems(result.error.issues, value, options.source) };
}

/** zod issues → problems, one per field (an unknown-keys issue becomes one problem per key). */
export function issuesToProblems(
  issues: ReadonlyArray<z.core.$ZodIssue>,
  document: unknown,
  source: string,
): Problem[] {
  return flattenIssues(issues).map(({ path, message }) => {
    const value = scalarAt(document, path);
    return {
      severity: "error",
      source,
      ...(path.length > 0 ? { path } : {}),
      ...(value === undefined ? {} : { value }),
      message,
    };
  });
}

/** zod issues → the `details` of the controller's 422 error body. */
export function issuesToDetails(
  issues: ReadonlyArray<z.core.$ZodIssue>,
  prefix: ReadonlyArray<string | number> = [],
): ApiErrorDetail[] {
  return flattenIssues(issues).map(({ path, message }) => ({
    field: formatPath([...prefix, ...path]) || "(body)",
    message,
  }));
}

function flattenIssues(issues: ReadonlyArray<z.core.$ZodIssue>): { path: Array<string | number>; message: string }[] {
  const out: { path: Array<string | number>; message: string }[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((segment): segment is string | number => typeof segment !== "symbol");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) out.push({ path: [...path, key], message: "is not a known field" });
    } else if (issue.code === "invalid_union" && issue.errors.length > 0 && issue.message === "Invalid input") {
      out.push({ path, message: "does not match any allowed form" });
    } else {
      out.push({ path, message: issue.message });
    }
  }
  return out;
}

/** The value at `path` as text, when it is a scalar worth quoting back to the user. */
function scalarAt(document: unknown, path: ReadonlyArray<string | number>): string | undefined {
  let value: unknown = document;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string | number, unknown>)[segment];
  }
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}
