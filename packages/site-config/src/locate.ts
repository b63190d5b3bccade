import { EVENT_ID, type Event, getScalarValue } from "js-yaml";

export type FieldPath = ReadonlyArray<string | number>;

/**
 * Where each field of a YAML document starts, from the parser's event stream: a mapping
 * entry is placed at its key, a sequence item at the item. `lineOf` answers for the
 * nearest located ancestor, so a missing field points at the mapping that lacks it.
 */
export interface Locator {
  lineOf(path: FieldPath): number | undefined;
}

export function locateFields(source: string, events: readonly Event[]): Locator {
  const lineStarts = [0];
  for (let index = source.indexOf("\n"); index !== -1; index = source.indexOf("\n", index + 1)) {
    lineStarts.push(index + 1);
  }
  const lineAt = (offset: number): number => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= offset) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  };

  const lines = new Map<string, number>();
  const record = (path: FieldPath, offset: number) => {
    const key = JSON.stringify(path);
    if (offset >= 0 && !lines.has(key)) lines.set(key, lineAt(offset));
  };

  // Returns the index of the event after the node that starts at `index`.
  const walk = (index: number, path: FieldPath): number => {
    const event = events[index];
    if (event === undefined) return index;
    switch (event.type) {
      case EVENT_ID.SCALAR:
        record(path, event.valueStart >= 0 ? event.valueStart : event.anchorStart);
        return index + 1;
      case EVENT_ID.ALIAS:
        record(path, event.anchorStart);
        return index + 1;
      case EVENT_ID.SEQUENCE: {
        record(path, event.start);
        let next = index + 1;
        for (let item = 0; next < events.length && events[next]?.type !== EVENT_ID.POP; item++) {
          next = walk(next, [...path, item]);
        }
        return next + 1;
      }
      case EVENT_ID.MAPPING: {
        record(path, event.start);
        let next = index + 1;
        while (next < events.length && events[next]?.type !== EVENT_ID.POP) {
          const key = events[next];
          const name = key?.type === EVENT_ID.SCALAR ? getScalarValue(source, key) : undefined;
          const childPath = [...path, name ?? "?"];
          if (key?.type === EVENT_ID.SCALAR) record(childPath, key.valueStart);
          next = walk(next, [...path, "?key"]);
          next = walk(next, childPath);
        }
        return next + 1;
      }
      default:
        return index + 1;
    }
  };

  // Only the first document is located; a config file holds one.
  const first = events.findIndex((event) => event.type === EVENT_ID.DOCUMENT);
  if (first !== -1) walk(first + 1, []);

  return {
    lineOf(path) {
      for (let length = path.length; length >= 0; length--) {
        const line = lines.get(JSON.stringify(path.slice(0, length)));
        if (line !== undefined) return line;
      }
      return undefined;
    },
  };
}
