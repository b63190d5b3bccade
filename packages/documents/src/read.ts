import type { Problem } from "@nodekit/errors";
import { constructFromEvents, type Event, parseEvents, YAMLException } from "js-yaml";
import { type FieldPath, locateDocuments } from "./locate.ts";

/** One document of a YAML (or JSON) file: its value, and where each of its fields is written. */
export interface LocatedDocument {
  /** The document as js-yaml constructs it; `null` for an empty document (`---` alone, or `~`). */
  readonly value: unknown;
  /**
   * The 1-based line of the field at `path` (a mapping entry is at its key, a list item at
   * the item), or of its nearest enclosing field that is in the file: a missing field
   * answers with the line of the mapping that lacks it.
   */
  lineOf(path: FieldPath): number | undefined;
}

export interface ReadYamlOptions {
  /** How problems name the input: the file path as the user gave it. */
  source: string;
  /** More documents than this is a problem naming the count. No limit when left out. */
  maxDocuments?: number;
  /**
   * The file in words, for the problem about too many documents: "a site spec file" gives
   * `holds 2 YAML documents; a site spec file holds exactly one`.
   */
  fileKind?: string;
  /**
   * What the syntax problem calls the text, for input that may also be written in JSON:
   * "YAML or JSON" gives `is not valid YAML or JSON: …`. "YAML" when left out.
   */
  language?: string;
}

export interface ReadYamlResult {
  /** The documents in file order; empty when there is a problem, or when the text holds none (only comments). */
  documents: LocatedDocument[];
  /** At most one problem: invalid YAML (with its line and column), or too many documents. */
  problems: Problem[];
}

/**
 * Parse YAML text (JSON is YAML, so JSON files read the same way) into documents that know
 * their fields' lines. Never throws: invalid YAML, and more documents than `maxDocuments`,
 * come back as a problem.
 */
export function readYamlDocuments(text: string, options: ReadYamlOptions): ReadYamlResult {
  const { source, maxDocuments = Number.POSITIVE_INFINITY } = options;
  let events: Event[];
  let values: unknown[];
  try {
    events = parseEvents(text, {});
    values = constructFromEvents(events, { source: text });
  } catch (error) {
    return { documents: [], problems: [yamlProblem(error, source, options.language ?? "YAML")] };
  }
  if (values.length > maxDocuments) {
    const rule =
      options.fileKind === undefined
        ? `expected ${maxDocuments === 1 ? "one" : `at most ${maxDocuments}`} per file`
        : `${options.fileKind} holds ${maxDocuments === 1 ? "exactly one" : `at most ${maxDocuments}`}`;
    return {
      documents: [],
      problems: [{ severity: "error", source, message: `holds ${values.length} YAML documents; ${rule}` }],
    };
  }
  // Located on first use: a valid document is often never asked for a line.
  let lines: ReturnType<typeof locateDocuments> | undefined;
  return {
    documents: values.map((value, index) => ({
      value,
      lineOf: (path) => {
        lines ??= locateDocuments(text, events);
        return lines[index]?.(path);
      },
    })),
    problems: [],
  };
}

function yamlProblem(error: unknown, source: string, language: string): Problem {
  if (error instanceof YAMLException) {
    const problem: Problem = { severity: "error", source, message: `is not valid ${language}: ${error.reason}` };
    if (error.mark !== undefined) {
      problem.line = error.mark.line + 1;
      problem.column = error.mark.column + 1;
    }
    return problem;
  }
  const message = error instanceof Error ? error.message : String(error);
  return { severity: "error", source, message: `could not be read as ${language}: ${message}` };
}
