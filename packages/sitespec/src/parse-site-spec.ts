import { readYamlDocuments, validateDocument } from "@nodekit/documents";
import type { Problem } from "@nodekit/errors";
import { type SiteSpec, SiteSpecSchema } from "./schema.ts";

export interface ParseSiteSpecOptions {
  /** The file name to put in problems, as the user gave it. */
  source: string;
}

export interface ParsedSiteSpec {
  /** The validated spec; present exactly when `problems` is empty. */
  spec?: SiteSpec;
  /** Every problem found, in file order, each with its field path and line. */
  problems: Problem[];
}

/**
 * Reads and validates a site spec YAML file (one document). Reports every problem at
 * once, each with the field path and line, rather than the first.
 */
export function parseSiteSpec(text: string, options: ParseSiteSpecOptions): ParsedSiteSpec {
  const { source } = options;
  const read = readYamlDocuments(text, { source, maxDocuments: 1, fileKind: "a site spec file" });
  if (read.problems.length > 0) return { problems: read.problems };
  const document = read.documents[0];
  if (document === undefined || document.value === null) {
    return { problems: [{ severity: "error", source, message: "is empty; expected a SiteSpec document" }] };
  }
  const { value } = document;
  if (typeof value !== "object" || Array.isArray(value)) {
    return {
      problems: [
        {
          severity: "error",
          source,
          line: 1,
          message: `holds ${Array.isArray(value) ? "a list" : "a single value"}, but a site spec is a mapping with apiVersion, kind, metadata and spec`,
        },
      ],
    };
  }
  const validated = validateDocument(SiteSpecSchema, document, { source });
  return validated.value === undefined ? { problems: validated.problems } : { spec: validated.value, problems: [] };
}
