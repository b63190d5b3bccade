import { readFile } from "node:fs/promises";
import { ExitCode, type Problem, UserError } from "@nodekit/errors";
import { loadAll } from "js-yaml";

/** A document parsed from a file or a flag value; `source` names it in messages. */
export interface ParsedDocument {
  value: unknown;
  source: string;
}

/** Reads a request file; a missing file is NotFound, an unreadable one InvalidInput. */
export async function readInputFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UserError("INPUT_FILE_UNREADABLE", `cannot read ${path}: ${code}`, {
      exitCode: code === "ENOENT" ? ExitCode.NotFound : ExitCode.InvalidInput,
      next: `check the path given to ${flag}`,
    });
  }
}

/**
 * The documents in a YAML or JSON text (JSON is read as YAML, as kubectl does, so an error
 * in either comes with its line and column). Empty documents (a trailing `---`) are not
 * counted.
 */
function parseDocuments(text: string, source: string): { documents: unknown[]; problems: Problem[] } {
  try {
    return { documents: loadAll(text).filter((doc) => doc !== null && doc !== undefined), problems: [] };
  } catch (error) {
    const yamlError = error as { reason?: string; mark?: { line: number; column: number }; message?: string };
    return {
      documents: [],
      problems: [
        {
          severity: "error",
          source,
          ...(yamlError.mark ? { line: yamlError.mark.line + 1, column: yamlError.mark.column + 1 } : {}),
          message: `is not valid YAML or JSON: ${yamlError.reason ?? yamlError.message ?? String(error)}`,
        },
      ],
    };
  }
}

/**
 * Exactly one document, a mapping (an object): what every create request and patch is.
 * Throws INPUT_INVALID (InvalidInput) for a syntax error, no document, several documents
 * (naming how many), or a document that is not an object.
 */
export function singleObject(text: string, source: string, what: string): ParsedDocument {
  const { documents, problems } = parseDocuments(text, source);
  if (problems.length > 0) throw invalid(source, problems, [`fix the ${what} and run the command again`]);
  if (documents.length !== 1) {
    const several = documents.length > 1;
    throw new UserError(
      several ? "INPUT_MULTIPLE_DOCUMENTS" : "INPUT_EMPTY",
      several
        ? `${source} holds ${documents.length} documents; it must hold exactly one ${what}. Nothing was sent.`
        : `${source} holds no document; it must hold one ${what}. Nothing was sent.`,
      {
        exitCode: ExitCode.InvalidInput,
        ...(several
          ? { why: "each invocation sends one request, and a partial set of creations is hard to undo" }
          : {}),
        next: several ? `split the file and run the command once per ${what}` : `write the ${what} into ${source}`,
      },
    );
  }
  const [value] = documents;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalid(source, [
      { severity: "error", source, message: `must be a ${what} (a mapping of fields), not ${describeType(value)}` },
    ]);
  }
  return { value, source };
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The error for invalid input: every problem, and that nothing was sent. */
export function invalid(source: string, problems: Problem[], next?: string | string[]): UserError {
  const errors = problems.filter((p) => p.severity === "error");
  return new UserError(
    "INPUT_INVALID",
    `${source} has ${errors.length} ${errors.length === 1 ? "problem" : "problems"}; nothing was sent to the controller`,
    {
      exitCode: ExitCode.InvalidInput,
      problems: errors,
      next: next ?? "fix every problem listed above and run the command again",
    },
  );
}

/** Whether the document lacks the field at `path` altogether (its parent exists and has no such key). */
export function isMissing(document: unknown, path: ReadonlyArray<PropertyKey>): boolean {
  if (path.length === 0) return false;
  let parent = document;
  for (const segment of path.slice(0, -1)) {
    if (typeof parent !== "object" || parent === null) return false;
    parent = (parent as Record<PropertyKey, unknown>)[segment];
  }
  return typeof parent === "object" && parent !== null && !Object.hasOwn(parent, path.at(-1) as PropertyKey);
}
