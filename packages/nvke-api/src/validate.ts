import { type Validated, validateDocument } from "@nodekit/documents";
import { formatPath, type Problem } from "@nodekit/errors";
import type * as z from "zod";
import type { ApiErrorDetail } from "./schemas.ts";

export interface ParseRequestOptions {
  /** The file (or other input) name to put in problems, as the user gave it. */
  source: string;
}

/** The validated request (defaults applied) when there is no problem, else every problem. */
export type ParsedRequest<T> = Validated<T>;

/**
 * Validates a request document (already read from YAML or JSON) against one of the
 * request schemas, the same way the controller does, and reports every problem at once,
 * each with its field path and the offending value. Pure: it reads nothing and throws
 * nothing for invalid input. (A caller that read the document with `readYamlDocuments`
 * from `@nodekit/documents` can pass it to `validateDocument` itself, to get lines too.)
 */
export function parseRequest<S extends z.ZodType>(
  schema: S,
  value: unknown,
  options: ParseRequestOptions,
): ParsedRequest<z.output<S>> {
  return validateDocument(schema, { value }, { source: options.source });
}

/** Problems → the `details` of the controller's 422 error body: each field path as text, and the message. */
export function problemsToDetails(problems: readonly Problem[]): ApiErrorDetail[] {
  return problems.map((problem) => ({ field: formatPath(problem.path ?? []) || "(body)", message: problem.message }));
}
