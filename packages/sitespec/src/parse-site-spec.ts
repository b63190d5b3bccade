import type { Problem } from "@nodekit/errors";
import { constructFromEvents, type Event, parseEvents, YAMLException } from "js-yaml";
import type * as z from "zod";
import { type SiteSpec, SiteSpecSchema } from "./schema.ts";
import { YamlLocations } from "./yaml-locations.ts";

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
  let events: Event[];
  let documents: unknown[];
  try {
    events = parseEvents(text, { filename: source });
    documents = constructFromEvents(events, { source: text, filename: source });
  } catch (error) {
    if (error instanceof YAMLException) {
      const line = error.mark === undefined ? {} : { line: error.mark.line + 1 };
      return { problems: [{ severity: "error", source, ...line, message: `is not valid YAML: ${error.reason}` }] };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { problems: [{ severity: "error", source, message: `could not be read as YAML: ${message}` }] };
  }

  if (documents.length > 1) {
    return {
      problems: [
        {
          severity: "error",
          source,
          message: `holds ${documents.length} YAML documents; a site spec file holds exactly one`,
        },
      ],
    };
  }
  const document = documents[0];
  if (document === undefined || document === null) {
    return { problems: [{ severity: "error", source, message: "is empty; expected a SiteSpec document" }] };
  }
  if (typeof document !== "object" || Array.isArray(document)) {
    return {
      problems: [
        {
          severity: "error",
          source,
          line: 1,
          message: `holds ${Array.isArray(document) ? "a list" : "a single value"}, but a site spec is a mapping with apiVersion, kind, metadata and spec`,
        },
      ],
    };
  }

  const result = SiteSpecSchema.safeParse(document);
  if (result.success) return { spec: result.data, problems: [] };
  const locations = new YamlLocations(text, events);
  const problems = result.error.issues.flatMap((issue) => toProblems(issue, document, source, locations));
  // Array.prototype.sort is stable: problems on one line keep zod's order.
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { problems };
}

function toProblems(issue: z.core.$ZodIssue, document: unknown, source: string, locations: YamlLocations): Problem[] {
  const path = issue.path.filter((segment): segment is string | number => typeof segment !== "symbol");
  const paths = issue.code === "unrecognized_keys" ? issue.keys.map((key) => [...path, key]) : [path];
  return paths.map((fieldPath) => {
    const line = locations.lineOf(fieldPath);
    const value = scalarAt(document, fieldPath);
    return {
      severity: "error",
      source,
      ...(line === undefined ? {} : { line }),
      path: fieldPath,
      ...(value === undefined ? {} : { value }),
      message: issue.message,
    };
  });
}

/** The value at `path` as text, when it is a scalar worth quoting back to the user. */
function scalarAt(document: unknown, path: ReadonlyArray<string | number>): string | undefined {
  let value: unknown = document;
  for (const segment of path) {
    if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string | number, unknown>)[segment];
  }
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}
