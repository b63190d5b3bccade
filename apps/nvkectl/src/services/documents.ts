import {
  type LocatedDocument,
  readInputFile as readBoundedFile,
  readInputStream,
  readYamlDocuments,
  validateDocument,
} from "@nodekit/documents";
import type { Problem } from "@nodekit/errors";
import { UserError } from "@nodekit/errors";
import type * as z from "zod";
import { errorCodes } from "../errors.ts";
import { textOf } from "./files.ts";

/** How problems name an input path: `-` is standard input, named "stdin" (kubectl says STDIN). */
export const inputSource = (path: string): string => (path === "-" ? "stdin" : path);

/**
 * Reads a request file, or standard input for `-` (as kubectl's `-f -`); a missing file is
 * NotFound, an unreadable one InvalidInput, and so is one that is not UTF-8 text (located)
 * or one larger than 8 MiB (INPUT_TOO_LARGE: reading stops there, /dev/zero included).
 */
export async function readInputFile(path: string, flag: string): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = path === "-" ? await readInputStream(process.stdin) : await readBoundedFile(path);
  } catch (error) {
    if (error instanceof UserError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    const errorCode = code === "ENOENT" ? errorCodes.INPUT_FILE_NOT_FOUND : errorCodes.INPUT_FILE_UNREADABLE;
    throw new UserError(errorCode, `cannot read ${inputSource(path)}: ${code}`, {
      next: `check the path given to ${flag}`,
    });
  }
  const source = inputSource(path);
  return textOf(bytes, source, (problems) => invalid(source, problems, [`save ${source} as UTF-8 text`]));
}

/**
 * Exactly one document, a mapping (an object): what every create request and patch is.
 * JSON is read as YAML, as kubectl does, so a syntax error in either comes with its line
 * and column; the document knows the line of each of its fields. Empty documents (a
 * trailing `---`) are not counted. Throws INPUT_INVALID (InvalidInput) for a syntax
 * error or a document that is not a mapping, INPUT_EMPTY for none, and
 * INPUT_MULTIPLE_DOCUMENTS naming how many.
 */
export function singleObject(
  text: string,
  source: string,
  what: string,
  purpose: "request" | "patch" = "request",
): LocatedDocument {
  const read = readYamlDocuments(text, { source, language: "YAML or JSON" });
  if (read.problems.length > 0) throw invalid(source, read.problems, [`fix the ${what} and run the command again`]);
  // Counted here rather than with `maxDocuments`: a trailing `---` is no second request, and
  // several documents keep their own error code and reason.
  const documents = read.documents.filter((document) => document.value !== null);
  const [document] = documents;
  if (documents.length !== 1 || document === undefined) {
    const several = documents.length > 1;
    throw new UserError(
      several ? errorCodes.INPUT_MULTIPLE_DOCUMENTS : errorCodes.INPUT_EMPTY,
      several
        ? `${source} holds ${documents.length} documents; it must hold exactly one ${what}. Nothing was sent.`
        : `${source} holds no document; it must hold one ${what}. Nothing was sent.`,
      {
        ...(several
          ? {
              why:
                purpose === "patch"
                  ? "each invocation sends one merge patch, and the documents would change the object one after another"
                  : "each invocation sends one request, and a partial set of creations is hard to undo",
            }
          : {}),
        next: several
          ? purpose === "patch"
            ? "merge the documents into one patch"
            : `split the file and run the command once per ${what}`
          : `write the ${what} into ${source}`,
      },
    );
  }
  if (typeof document.value !== "object" || Array.isArray(document.value)) {
    throw invalid(source, [
      {
        severity: "error",
        source,
        message: `must be a ${what} (a mapping of fields), not ${describeType(document.value)}`,
      },
    ]);
  }
  return document;
}

function describeType(value: unknown): string {
  return Array.isArray(value) ? "a list" : `a ${typeof value}`;
}

/**
 * The request, checked against the API schema as the controller checks it, or
 * INPUT_INVALID with every problem (`extra` ones too), in line order, each with its field
 * path and, when the document came from a file, its line.
 */
export function validateRequest<S extends z.ZodType>(
  schema: S,
  document: LocatedDocument | { readonly value: unknown },
  source: string,
  extra: readonly Problem[] = [],
): z.output<S> {
  const { value, problems } = validateDocument(schema, document, { source });
  if (problems.length === 0 && extra.length === 0) return value as z.output<S>;
  // Array.prototype.sort is stable: the problems of one line keep their order, extra ones first.
  throw invalid(
    source,
    [...extra, ...problems].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)),
  );
}

/** The error for invalid input: every problem, and that nothing was sent. */
function invalid(source: string, problems: Problem[], next?: string | string[]): UserError {
  const errors = problems.filter((p) => p.severity === "error");
  return new UserError(
    errorCodes.INPUT_INVALID,
    `${source} has ${errors.length} ${errors.length === 1 ? "problem" : "problems"}; nothing was sent to the controller`,
    {
      problems: errors,
      next: next ?? "fix every problem listed above and run the command again",
    },
  );
}
