import type { Problem } from "@nodekit/errors";
import { isPlainObject, issuesToProblems } from "@nodekit/nvke-api";
import type * as z from "zod";
import { invalid, isMissing, type ParsedDocument, readInputFile, singleObject } from "./documents.ts";

/**
 * Reads a create request from a YAML or JSON file holding exactly one document and checks
 * it against the API schema, as the controller would, before anything is sent. Every
 * problem is reported at once, each with its field path.
 */
export async function readRequestFile<S extends z.ZodType>(
  schema: S,
  file: string,
  what: string,
): Promise<z.output<S>> {
  const text = await readInputFile(file, "-f");
  return validateRequest(schema, singleObject(text, file, what));
}

function validateRequest<S extends z.ZodType>(schema: S, document: ParsedDocument, extra: Problem[] = []): z.output<S> {
  const result = schema.safeParse(document.value);
  if (result.success && extra.length === 0) return result.data;
  // A type or format problem with a field the document does not have at all is, for the
  // user, a missing required field (the schema's own refinements keep their words).
  const issues = (result.success ? [] : result.error.issues).map((issue) =>
    issue.code !== "custom" && issue.code !== "unrecognized_keys" && isMissing(document.value, issue.path)
      ? { ...issue, message: "is required" }
      : issue,
  );
  throw invalid(document.source, [...extra, ...issuesToProblems(issues, document.value, document.source)]);
}

/**
 * A JSON merge patch from `--patch` (JSON text) or `--patch-file` (YAML or JSON): one
 * object, sent as the user wrote it once it passes the schema. Fields the object may
 * never change get a message that says so, ahead of the schema's own problems.
 */
export async function readPatch<S extends z.ZodType>(options: {
  schema: S;
  patch?: string | undefined;
  patchFile?: string | undefined;
  immutable: readonly string[];
  readOnly: readonly string[];
  kind: string;
}): Promise<Record<string, unknown>> {
  const document =
    options.patchFile !== undefined
      ? singleObject(await readInputFile(options.patchFile, "--patch-file"), options.patchFile, "merge patch")
      : singleObject(options.patch ?? "", "--patch", "merge patch");
  const source = options.patchFile ?? "--patch";
  const value = document.value as Record<string, unknown>;
  const extra: Problem[] = [];
  const rest: Record<string, unknown> = {};
  for (const [field, fieldValue] of Object.entries(value)) {
    if (options.immutable.includes(field)) {
      extra.push({
        severity: "error",
        source,
        path: [field],
        message: `cannot be changed once the ${options.kind} exists`,
      });
    } else if (options.readOnly.includes(field)) {
      extra.push({
        severity: "error",
        source,
        path: [field],
        message: "is set by the controller and cannot be patched",
      });
    } else {
      rest[field] = fieldValue;
    }
  }
  if (Object.keys(value).length === 0) {
    extra.push({ severity: "error", source, message: "is an empty patch: name at least one field to change" });
  }
  validateRequest(options.schema, { value: rest, source }, extra);
  return isPlainObject(value) ? value : {};
}
