import type { Problem } from "@nodekit/errors";
import type * as z from "zod";

// The services that create and patch also list and get, so `get` commands import this
// module too: the YAML reader and the request checks load when a request is first read.
const reading = () => import("./documents.ts");

/** The API's zod schemas, loaded when a request or patch is checked: a read never loads zod. */
export const apiSchemas = () => import("@nodekit/nvke-api");

/**
 * Reads a create request from a YAML or JSON file holding exactly one document and checks
 * it against the API schema, as the controller would, before anything is sent. Every
 * problem is reported at once, each with its line and field path.
 */
export async function readRequestFile<S extends z.ZodType>(
  schema: S,
  file: string,
  what: string,
  fill?: FieldFill,
): Promise<z.output<S>> {
  const { inputSource, readInputFile, singleObject, validateRequest } = await reading();
  const text = await readInputFile(file, "-f");
  const source = inputSource(file);
  const document = singleObject(text, source, what);
  const extra: Problem[] = [];
  if (fill !== undefined) {
    const value = document.value as Record<string, unknown>;
    const given = value[fill.field];
    if (given === undefined || given === null || given === fill.value) value[fill.field] = fill.value;
    else {
      const line = document.lineOf([fill.field]);
      extra.push({
        severity: "error",
        source,
        ...(line === undefined ? {} : { line }),
        path: [fill.field],
        ...(typeof given === "string" || typeof given === "number" || typeof given === "boolean"
          ? { value: given }
          : {}),
        message: `differs from ${fill.flag} (${fill.describe}); give one of them, or the same`,
      });
    }
  }
  return validateRequest(schema, document, source, extra);
}

/** A field a flag fills in when the file leaves it out (`create nodepool --cluster NAME` fills clusterID). */
export interface FieldFill {
  field: string;
  value: unknown;
  /** The flag, as the user typed it, for a problem when the file says otherwise. */
  flag: string;
  /** What the flag's value stands for: `cluster "a" has ID …`. */
  describe: string;
}

/**
 * A JSON merge patch from `--patch` or `--patch-file`, JSON or YAML either way (kubectl's
 * `patch -p` reads YAML too; JSON is YAML, so one reader serves both): one
 * object, sent as the user wrote it once it passes the schema. Fields the object may
 * never change get a message that says so. Problems with a file carry their lines; a
 * `--patch` value is the one line the user typed.
 */
export async function readPatch<S extends z.ZodType>(options: {
  schema: S;
  patch?: string | undefined;
  patchFile?: string | undefined;
  immutable: readonly string[];
  readOnly: readonly string[];
  kind: string;
}): Promise<Record<string, unknown>> {
  const { inputSource, readInputFile, singleObject, validateRequest } = await reading();
  const source = options.patchFile === undefined ? "--patch" : inputSource(options.patchFile);
  const text = options.patchFile !== undefined ? await readInputFile(options.patchFile, "--patch-file") : options.patch;
  const document = singleObject(text ?? "", source, "merge patch", "patch");
  const lineOf = options.patchFile !== undefined ? document.lineOf : () => undefined;
  const value = document.value as Record<string, unknown>;
  const extra: Problem[] = [];
  const rest: Record<string, unknown> = {};
  for (const [field, fieldValue] of Object.entries(value)) {
    const reason = options.immutable.includes(field)
      ? `cannot be changed once the ${options.kind} exists`
      : options.readOnly.includes(field)
        ? "is set by the controller and cannot be patched"
        : undefined;
    if (reason === undefined) {
      rest[field] = fieldValue;
      continue;
    }
    const line = lineOf([field]);
    extra.push({ severity: "error", source, ...(line === undefined ? {} : { line }), path: [field], message: reason });
  }
  if (Object.keys(value).length === 0) {
    extra.push({ severity: "error", source, message: "is an empty patch: name at least one field to change" });
  }
  validateRequest(options.schema, { value: rest, lineOf }, source, extra);
  return value;
}
