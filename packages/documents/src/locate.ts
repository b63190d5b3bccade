import { EVENT_ID, type Event, getScalarValue } from "js-yaml";

/** Where a field sits inside a document: mapping keys and sequence indexes, as zod reports them. */
export type FieldPath = ReadonlyArray<string | number>;

/** The line of the field at a path, or of its nearest enclosing field written in the file. */
export type LineOf = (path: FieldPath) => number | undefined;

type Frame =
  | { kind: "document"; path: FieldPath }
  | { kind: "sequence"; path: FieldPath | undefined; next: number }
  /** `key` is the scalar key whose value comes next; undefined after a complex key, whose value has no path. */
  | { kind: "mapping"; path: FieldPath | undefined; atKey: boolean; key: string | undefined };

/**
 * One `lineOf` per document in the event stream, from the source offsets js-yaml's events
 * carry. A mapping entry is placed at its key, a sequence item at the item, so a problem
 * with a field points at the line that names it; a path that is not in the file (a
 * missing field) answers with its nearest ancestor that is, i.e. the mapping that lacks it.
 */
export function locateDocuments(text: string, events: readonly Event[]): LineOf[] {
  const lineOfOffset = lineIndex(text);
  const documents: Map<string, number>[] = [];
  let offsets = new Map<string, number>();
  const remember = (path: FieldPath, offset: number) => {
    const key = pathKey(path);
    if (offset >= 0 && !offsets.has(key)) offsets.set(key, offset);
  };

  // Iterative rather than recursive, so that nesting depth costs heap, not stack.
  const stack: Frame[] = [];
  for (const event of events) {
    if (event.type === EVENT_ID.DOCUMENT) {
      offsets = new Map();
      documents.push(offsets);
      stack.push({ kind: "document", path: [] });
      continue;
    }
    if (event.type === EVENT_ID.POP) {
      stack.pop();
      continue;
    }
    const parent = stack.at(-1);
    let path: FieldPath | undefined;
    if (parent === undefined) path = undefined;
    else if (parent.kind === "document") path = parent.path;
    else if (parent.kind === "sequence") {
      path = parent.path === undefined ? undefined : [...parent.path, parent.next];
      parent.next += 1;
    } else if (parent.atKey) {
      parent.atKey = false;
      parent.key = event.type === EVENT_ID.SCALAR ? getScalarValue(text, event) : undefined;
      if (parent.path !== undefined && parent.key !== undefined && event.type === EVENT_ID.SCALAR) {
        remember([...parent.path, parent.key], event.valueStart);
      }
      path = undefined; // what is inside a complex key has no field path
    } else {
      parent.atKey = true;
      path = parent.path === undefined || parent.key === undefined ? undefined : [...parent.path, parent.key];
    }
    if (path !== undefined) remember(path, startOf(event));
    if (event.type === EVENT_ID.MAPPING) stack.push({ kind: "mapping", path, atKey: true, key: undefined });
    else if (event.type === EVENT_ID.SEQUENCE) stack.push({ kind: "sequence", path, next: 0 });
  }

  return documents.map((found) => (path) => {
    for (let length = path.length; length >= 0; length -= 1) {
      const offset = found.get(pathKey(path.slice(0, length)));
      if (offset !== undefined) return lineOfOffset(offset);
    }
    return undefined;
  });
}

/** Where a node starts; an empty scalar (`key:` with no value) has no offset of its own: -1. */
function startOf(event: Event): number {
  switch (event.type) {
    case EVENT_ID.SCALAR:
      return [event.valueStart, event.anchorStart, event.tagStart].find((offset) => offset >= 0) ?? -1;
    case EVENT_ID.ALIAS:
      return event.anchorStart;
    case EVENT_ID.MAPPING:
    case EVENT_ID.SEQUENCE:
      return event.start;
    default:
      return -1;
  }
}

// JSON keeps ["a.b"] apart from ["a", "b"], and the sequence index 0 apart from the key "0".
function pathKey(path: FieldPath): string {
  return JSON.stringify(path);
}

/** offset → 1-based line, by binary search over the line starts (built on first use). */
function lineIndex(text: string): (offset: number) => number {
  let starts: number[] | undefined;
  return (offset) => {
    if (starts === undefined) {
      starts = [0];
      for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) starts.push(index + 1);
    }
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  };
}
