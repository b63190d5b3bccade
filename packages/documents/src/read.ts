import type { Problem } from "@nodekit/errors";
import { constructFromEvents, EVENT_ID, type Event, parseEvents, YAMLException } from "js-yaml";
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
  /**
   * How many nodes aliases (`*name`) may repeat in all, counted as if each were written
   * out: a few kilobytes of nested aliases (a "billion laughs" file) would otherwise expand
   * to billions. Default {@link DEFAULT_MAX_ALIAS_NODES}.
   */
  maxAliasNodes?: number;
  /** The longest text read, in characters. Default {@link DEFAULT_MAX_TEXT_LENGTH} (8 MiB). */
  maxLength?: number;
}

/** Aliases may repeat this many nodes in all, by default: far more than any hand-written file needs. */
export const DEFAULT_MAX_ALIAS_NODES = 10_000;
/** Documents are read up to this many characters, by default. */
export const DEFAULT_MAX_TEXT_LENGTH = 8 * 1024 * 1024;

export interface ReadYamlResult {
  /** The documents in file order; empty when there is a problem, or when the text holds none (only comments). */
  documents: LocatedDocument[];
  /** At most one problem: invalid YAML (with its line and column), or too many documents. */
  problems: Problem[];
}

/**
 * Parse YAML text (JSON is YAML, so JSON files read the same way) into documents that know
 * their fields' lines. Never throws: invalid YAML, more documents than `maxDocuments`, text
 * longer than `maxLength`, an alias inside the node it names (a cycle) and aliases that
 * would expand past `maxAliasNodes` come back as a problem, located where it can be.
 */
export function readYamlDocuments(text: string, options: ReadYamlOptions): ReadYamlResult {
  const { source, maxDocuments = Number.POSITIVE_INFINITY } = options;
  const maxLength = options.maxLength ?? DEFAULT_MAX_TEXT_LENGTH;
  if (text.length > maxLength) {
    return {
      documents: [],
      problems: [
        { severity: "error", source, message: `is ${text.length} characters long; at most ${maxLength} are read` },
      ],
    };
  }
  let events: Event[];
  let values: unknown[];
  try {
    events = parseEvents(text, {});
    const aliasProblem = checkAliases(text, events, source, options.maxAliasNodes ?? DEFAULT_MAX_ALIAS_NODES);
    if (aliasProblem !== undefined) return { documents: [], problems: [aliasProblem] };
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

interface Open {
  size: number;
  anchor: string | undefined;
}

/**
 * Walks the events once, without expanding anything, to find what constructing the
 * documents would do with their aliases: an alias inside the very node its anchor names
 * makes a cyclic value (which no JSON can hold), and aliases repeat their node's whole
 * subtree each time. Returns the problem for the first alias that closes a cycle or takes
 * the nodes repeated past `limit`.
 */
function checkAliases(text: string, events: readonly Event[], source: string, limit: number): Problem | undefined {
  let anchors = new Map<string, { size: number; open: boolean }>();
  const stack: Open[] = [];
  let repeated = 0;
  const add = (size: number) => {
    const parent = stack.at(-1);
    if (parent !== undefined) parent.size += size;
  };
  const nameOf = (event: { anchorStart: number; anchorEnd: number }) =>
    event.anchorStart >= 0 ? text.slice(event.anchorStart, event.anchorEnd) : undefined;
  for (const event of events) {
    switch (event.type) {
      case EVENT_ID.DOCUMENT:
        anchors = new Map();
        stack.length = 0;
        break;
      case EVENT_ID.SCALAR: {
        const anchor = nameOf(event);
        if (anchor !== undefined) anchors.set(anchor, { size: 1, open: false });
        add(1);
        break;
      }
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE: {
        const anchor = nameOf(event);
        if (anchor !== undefined) anchors.set(anchor, { size: 0, open: true });
        stack.push({ size: 1, anchor });
        break;
      }
      case EVENT_ID.ALIAS: {
        const name = text.slice(event.anchorStart, event.anchorEnd);
        const target = anchors.get(name);
        // An unknown alias is the constructor's to report, with its own message.
        if (target === undefined) break;
        const at = position(text, Math.max(0, event.anchorStart - 1));
        if (target.open) {
          return {
            severity: "error",
            source,
            ...at,
            message: `has an alias *${name} inside the node &${name} it repeats: the value would contain itself`,
          };
        }
        repeated += target.size;
        if (repeated > limit) {
          return {
            severity: "error",
            source,
            ...at,
            message: `repeats more than ${limit} nodes through aliases (here *${name}); write the values out, or use fewer aliases`,
          };
        }
        add(target.size);
        break;
      }
      case EVENT_ID.POP: {
        const done = stack.pop();
        if (done === undefined) break;
        if (done.anchor !== undefined) anchors.set(done.anchor, { size: done.size, open: false });
        add(done.size);
        break;
      }
      default:
        break;
    }
  }
  return undefined;
}

/** 1-based line and column of an offset. */
function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let index = text.indexOf("\n"); index !== -1 && index < offset; index = text.indexOf("\n", index + 1)) {
    line += 1;
    lineStart = index + 1;
  }
  return { line, column: offset - lineStart + 1 };
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
