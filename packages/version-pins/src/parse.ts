import type { LocatedDocument } from "@nodekit/documents";
import { parseYamlWith, type Validated, validateDocument } from "@nodekit/documents";
import { type PinSet, PinSetSchema } from "./schema.ts";

export interface ParsePinsOptions {
  /** How problems name the input: a file path, or the URL the pins came from. */
  source: string;
}

/**
 * Parse a pin set from YAML or JSON text (the API's answer is JSON). Never throws: every
 * problem comes back with its line, field path and the value found there.
 */
export function parsePins(text: string, options: ParsePinsOptions): Validated<PinSet> {
  return parseYamlWith(PinSetSchema, text, { source: options.source, fileKind: "a pin set" });
}

/** Validate a pin set that is already a value (read with `readYamlDocuments`, or built in code). */
export function validatePins(
  document: LocatedDocument | { readonly value: unknown },
  options: ParsePinsOptions,
): Validated<PinSet> {
  return validateDocument(PinSetSchema, document, { source: options.source });
}
