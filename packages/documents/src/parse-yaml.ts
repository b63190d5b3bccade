import type * as z from "zod";
import { type ReadYamlOptions, readYamlDocuments } from "./read.ts";
import { type Validated, validateDocument } from "./validate.ts";

export interface ParseYamlOptions extends Pick<ReadYamlOptions, "source" | "fileKind" | "maxAliasNodes" | "maxLength"> {
  /**
   * What a file with no document in it (empty, only comments, or a lone `~`) means:
   * a value to validate in its place (`{ value: {} }` lets the schema's defaults fill in),
   * or the problem to report. By default the problem `is empty`.
   */
  empty?: { value: unknown } | { message: string };
}

/**
 * Read a one-document YAML or JSON file and validate it: `readYamlDocuments` with
 * `maxDocuments: 1`, then `validateDocument`. Never throws; every problem comes back with
 * its line and field path.
 */
export function parseYamlWith<S extends z.ZodType>(
  schema: S,
  text: string,
  options: ParseYamlOptions,
): Validated<z.output<S>> {
  const { source, empty = { message: "is empty" } } = options;
  const read = readYamlDocuments(text, {
    source,
    fileKind: options.fileKind,
    maxDocuments: 1,
    ...(options.maxAliasNodes === undefined ? {} : { maxAliasNodes: options.maxAliasNodes }),
    ...(options.maxLength === undefined ? {} : { maxLength: options.maxLength }),
  });
  if (read.problems.length > 0) return { problems: read.problems };
  const document = read.documents[0];
  if (document === undefined || document.value === null) {
    if ("message" in empty) return { problems: [{ severity: "error", source, message: empty.message }] };
    return validateDocument(schema, { value: empty.value }, { source });
  }
  return validateDocument(schema, document, { source });
}
