import * as z from "zod";

// @nodekit/documents/fields: building blocks for document schemas whose messages read as
// the end of the sentence formatProblem prints (`file.yaml:7: field spec.port: "x" must be a
// port number`), shared by every format the project reads (site spec, stack config, deploy
// path). A subpath of its own: it loads zod, and a CLI's hot path imports the package's
// index, which must not load zod.

/** An `error` option for a type check: "is required" when the field is absent, `must be ${expected}` otherwise. */
export const typeMessage =
  (expected: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? "is required" : `must be ${expected}`;

/**
 * A mapping that rejects unknown fields, the way `kubectl apply --validate=strict` does: a
 * misspelt optional field would otherwise be dropped without a word. The message lists the
 * fields that are known there.
 */
export function strictMapping<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  const known = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === "unrecognized_keys") return `is not a known field; the fields here are ${known}`;
      return issue.input === undefined ? "is required" : "must be a mapping";
    },
  });
}

/** A string checked by a rule that returns the reason it is wrong, or undefined when it is right. */
export function checkedString(check: (value: string) => string | undefined) {
  return z.string({ error: typeMessage("a string") }).superRefine((value, context) => {
    const fault = check(value);
    if (fault !== undefined) context.addIssue({ code: "custom", message: fault, input: value });
  });
}

/** A document's `apiVersion`: this one version, and a message naming it otherwise. */
export function apiVersionField<const Version extends string>(version: Version) {
  return z.literal(version, {
    error: (issue) => (issue.input === undefined ? "is required" : `is not supported; this version reads "${version}"`),
  });
}

/** A document's `kind`: this one kind. */
export function kindField<const Kind extends string>(kind: Kind) {
  return z.literal(kind, {
    error: (issue) => (issue.input === undefined ? "is required" : `must be "${kind}"`),
  });
}
