import { formatPath } from "@nodekit/errors";
import { EVENT_ID, type Event, getScalarValue } from "js-yaml";

type Path = ReadonlyArray<string | number>;

interface Frame {
  kind: "document" | "mapping" | "sequence";
  /** Undefined inside a complex (non-scalar) mapping key, whose contents have no path. */
  path: Path | undefined;
  /** Sequence: the next item's index. */
  next: number;
  /** Mapping: the key whose value comes next, or undefined when a key comes next. */
  key: string | undefined;
}

/**
 * Where each field of the first YAML document starts, from js-yaml's event stream (which
 * carries source offsets), so that a problem found in the loaded value can name its line.
 */
export class YamlLocations {
  readonly #text: string;
  readonly #offsets = new Map<string, number>();
  #lineStarts: number[] | undefined;

  constructor(text: string, events: readonly Event[]) {
    this.#text = text;
    const stack: Frame[] = [];
    let documents = 0;
    for (const event of events) {
      if (event.type === EVENT_ID.POP) {
        stack.pop();
        continue;
      }
      if (event.type === EVENT_ID.DOCUMENT) {
        documents += 1;
        stack.push({ kind: "document", path: documents === 1 ? [] : undefined, next: 0, key: undefined });
        continue;
      }
      const offset =
        event.type === EVENT_ID.SCALAR
          ? event.valueStart
          : event.type === EVENT_ID.ALIAS
            ? event.anchorStart
            : event.start;
      const parent = stack.at(-1);
      let path: Path | undefined;
      if (parent === undefined || parent.path === undefined) path = undefined;
      else if (parent.kind === "document") path = parent.path;
      else if (parent.kind === "sequence") path = [...parent.path, parent.next++];
      else if (parent.key === undefined) {
        // A key: the field's line is the key's line.
        const key = event.type === EVENT_ID.SCALAR ? getScalarValue(text, event) : undefined;
        parent.key = key ?? "";
        if (key !== undefined) this.#remember([...parent.path, key], offset);
        if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) {
          stack.push({
            kind: event.type === EVENT_ID.MAPPING ? "mapping" : "sequence",
            path: undefined,
            next: 0,
            key: undefined,
          });
        }
        continue;
      } else {
        path = [...parent.path, parent.key];
        parent.key = undefined;
      }
      if (path !== undefined) this.#remember(path, offset);
      if (event.type === EVENT_ID.MAPPING) stack.push({ kind: "mapping", path, next: 0, key: undefined });
      else if (event.type === EVENT_ID.SEQUENCE) stack.push({ kind: "sequence", path, next: 0, key: undefined });
    }
  }

  /** The 1-based line of the field at `path`, or of its nearest enclosing field that exists. */
  lineOf(path: Path): number | undefined {
    for (let length = path.length; length >= 0; length -= 1) {
      const offset = this.#offsets.get(key(path.slice(0, length)));
      if (offset !== undefined) return this.#line(offset);
    }
    return undefined;
  }

  #remember(path: Path, offset: number): void {
    const name = key(path);
    if (!this.#offsets.has(name)) this.#offsets.set(name, offset);
  }

  #line(offset: number): number {
    if (this.#lineStarts === undefined) {
      const starts = [0];
      for (let index = this.#text.indexOf("\n"); index !== -1; index = this.#text.indexOf("\n", index + 1)) {
        starts.push(index + 1);
      }
      this.#lineStarts = starts;
    }
    const starts = this.#lineStarts;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }
}

function key(path: Path): string {
  return path.length === 0 ? "" : `.${formatPath(path)}`;
}
