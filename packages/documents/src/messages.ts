import type * as z from "zod";

// Messages complete a sentence that starts with the field's path and value, as
// formatProblem prints them: `config.yaml:7: field sites[0].url: "ftp://x" must be an http:// …`.
// A message a schema gives itself (`{ error }`, a refinement's message) always wins; these
// are what a field gets when its schema says nothing, in place of zod's "Invalid input: …".

/**
 * A zod error map giving every issue a message that reads as the end of that sentence.
 * `validateDocument` passes it to `safeParse`; pass it yourself to validate elsewhere with
 * the same wording (`schema.safeParse(value, { error: readableMessage })`).
 */
export function readableMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      if (isInteger(issue.inst)) {
        return typeof issue.input === "number"
          ? "must be a whole number"
          : `must be a whole number, not ${describe(issue.input)}`;
      }
      return `must be ${expectedText(issue.expected)}, not ${describe(issue.input)}`;
    case "invalid_value":
      if (issue.input === undefined) return "is required";
      return `must be ${issue.values.map(literal).join(" or ")}`;
    case "unrecognized_keys": {
      const known = knownKeys(issue.inst);
      return known.length === 0
        ? "is not a known field"
        : `is not a known field; the fields here are ${known.join(", ")}`;
    }
    case "invalid_union":
      return unionMessage(issue);
    case "too_small":
      return sizeMessage("at least", issue.origin, issue.minimum, issue.inclusive !== false, issue.exact === true);
    case "too_big":
      return sizeMessage("at most", issue.origin, issue.maximum, issue.inclusive !== false, issue.exact === true);
    case "invalid_format":
      return formatMessage(issue);
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_key":
      return "is not an allowed key";
    default:
      // invalid_element, and a custom refinement that gave no message.
      return "is not valid";
  }
}

/** `z.int()` and friends report their type as "number"; their definition says whole numbers. */
function isInteger(schema: unknown): boolean {
  const format = (schema as { _zod?: { def?: { format?: unknown } } } | undefined)?._zod?.def?.format;
  return typeof format === "string" && /int/.test(format);
}

function expectedText(expected: string): string {
  switch (expected) {
    case "array":
    case "tuple":
      return "a list";
    case "object":
    case "record":
    case "map":
      return "a mapping";
    case "int":
      return "a whole number";
    case "boolean":
      return "true or false";
    case "null":
      return "null";
    case "nan":
      return "NaN";
    default:
      return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
  }
}

/** What a value read from YAML or JSON is, in the words a user of those formats knows. */
function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return /^[aeiou]/.test(typeof value) ? `an ${typeof value}` : `a ${typeof value}`;
}

function literal(value: unknown): string {
  return typeof value === "bigint" ? String(value) : (JSON.stringify(value) ?? String(value));
}

/** The fields a strict mapping knows, in the order the schema declares them. */
function knownKeys(schema: unknown): string[] {
  const def = (schema as { _zod?: { def?: { shape?: object; keyType?: { _zod?: { values?: Set<unknown> } } } } })?._zod
    ?.def;
  if (def?.shape !== undefined) return Object.keys(def.shape);
  const values = def?.keyType?._zod?.values;
  return values === undefined ? [] : [...values].map(String);
}

type UnionIssue = Extract<z.core.$ZodRawIssue, { code: "invalid_union" }>;

function unionMessage(issue: UnionIssue): string {
  const input = issue.input;
  if (issue.discriminator !== undefined && "options" in issue && Array.isArray(issue.options)) {
    const options = issue.options.map(literal).join(" or ");
    const found = isRecord(input) ? input[issue.discriminator] : undefined;
    return found === undefined ? `is required: ${options}` : `must be ${options}`;
  }
  if (input === undefined) return "is required";
  if (issue.errors.length === 0) return "matches more than one of the allowed forms";
  // When every form was turned away for its type ("a string or a list"), say which types would do.
  const wanted: string[] = [];
  for (const branch of issue.errors) {
    const [only] = branch;
    if (branch.length !== 1 || only === undefined || only.path.length > 0)
      return "does not match any of the allowed forms";
    if (only.code === "invalid_type") wanted.push(expectedText(only.expected));
    else if (only.code === "invalid_value") wanted.push(...only.values.map(literal));
    else return "does not match any of the allowed forms";
  }
  return `must be ${[...new Set(wanted)].join(" or ")}, not ${describe(input)}`;
}

function sizeMessage(
  bound: "at least" | "at most",
  origin: string,
  limit: number | bigint,
  inclusive: boolean,
  exact: boolean,
): string {
  const n = Number(limit);
  switch (origin) {
    case "string":
      if (bound === "at least" && n === 1 && !exact) return "must not be empty";
      return `must be ${exact ? "exactly" : bound} ${n} character${n === 1 ? "" : "s"} long`;
    case "array":
    case "set":
      if (bound === "at least" && n === 1 && !exact) return "must not be empty";
      return `must have ${exact ? "exactly" : bound} ${n} item${n === 1 ? "" : "s"}`;
    case "number":
    case "int":
    case "bigint":
      if (inclusive) return `must be ${bound} ${String(limit)}`;
      return `must be ${bound === "at least" ? "greater" : "less"} than ${String(limit)}`;
    case "date":
      return `must be ${bound === "at least" ? "on or after" : "on or before"} ${new Date(n).toISOString()}`;
    default:
      return `must be ${bound} ${String(limit)}`;
  }
}

function formatMessage(issue: Extract<z.core.$ZodRawIssue, { code: "invalid_format" }>): string {
  const detail = issue as { prefix?: string; suffix?: string; includes?: string; pattern?: string };
  switch (issue.format) {
    case "starts_with":
      return `must start with ${JSON.stringify(detail.prefix)}`;
    case "ends_with":
      return `must end with ${JSON.stringify(detail.suffix)}`;
    case "includes":
      return `must contain ${JSON.stringify(detail.includes)}`;
    case "regex":
      return `must match the pattern ${detail.pattern}`;
    case "url":
      return "is not a valid URL";
    case "email":
      return "is not a valid email address";
    case "datetime":
      return "is not a valid date and time (ISO 8601, e.g. 2025-01-31T12:00:00Z)";
    case "date":
      return "is not a valid date (YYYY-MM-DD)";
    default:
      return `is not a valid ${issue.format}`;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
