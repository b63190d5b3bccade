import { once } from "node:events";
import { BugError, escapeControl, escapeJsonControl } from "@nodekit/errors";
import { formatPlan, type Plan, planDocument } from "@nodekit/plan";
import type { Redactor } from "@nodekit/process";
import type { Template } from "./jsonpath.ts";

/** The fixed `-o` formats; `jsonpath=TEMPLATE` is the open one. */
export const OUTPUT_FORMATS = ["table", "wide", "json", "yaml", "name"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number] | `jsonpath=${string}`;

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | undefined | null;
  /** Shown only with `-o wide`. */
  wide?: boolean;
}

/**
 * How rows of one kind print: their table columns, and what `-o name` and `--show-labels`
 * read. A plain column list is a view without them.
 */
export interface View<T> {
  columns: readonly Column<T>[];
  /** `-o name` prints `<kind>/<name>`, as kubectl does (`cluster/tenant-a`). */
  kind?: string;
  name?: (row: T) => string;
  /** `--show-labels` adds a LABELS column from these. */
  labels?: (row: T) => Readonly<Record<string, string>> | undefined;
}

/** The rows of a table, or the columns and the kind that name them. */
export type Columns<T> = readonly Column<T>[] | View<T>;

/** What the list and table flags asked for (`--no-headers`, `--show-labels`, `--sort-by`), and a compiled jsonpath template. */
export interface PrintOptions {
  noHeaders?: boolean;
  showLabels?: boolean;
  /** The key `--sort-by` orders the items by (see compileSortKey). */
  sortKey?: (item: unknown) => unknown;
  /** Orders two sort-key values (see compareSortValues). */
  compare?: (a: unknown, b: unknown) => number;
  /** Required with `-o jsonpath=…` (see compileTemplate). */
  template?: Template;
}

export interface Rendered<T> extends View<T> {
  rows: readonly T[];
  /** What `-o json|yaml|jsonpath` prints; defaults to the rows. */
  data?: unknown;
}

/** The printer's stream: stdout, or a test's. */
export type OutStream = Pick<NodeJS.WritableStream, "write" | "once"> & NodeJS.EventEmitter;

/**
 * Writes to the stream, waiting when the pipe is full, so that a long list never piles up
 * in memory and nothing is lost when the process ends right after.
 */
export async function writeOut(text: string, stream: OutStream = process.stdout): Promise<void> {
  if (text === "") return;
  if (!stream.write(text)) await once(stream, "drain");
}

/** Whether the format is a table (table or wide), which prints "No resources found." on stderr when empty. */
export function isTableFormat(format: OutputFormat): format is "table" | "wide" {
  return format === "table" || format === "wide";
}

/** The template of `jsonpath=TEMPLATE`, or undefined for any other format. */
export function jsonPathTemplate(format: OutputFormat): string | undefined {
  return format.startsWith("jsonpath=") ? format.slice("jsonpath=".length) : undefined;
}

function viewOf<T>(columns: Columns<T>): View<T> {
  return isColumnList(columns) ? { columns } : columns;
}

function isColumnList<T>(columns: Columns<T>): columns is readonly Column<T>[] {
  return Array.isArray(columns);
}

/** The columns a format shows: all with `-o wide`, else those not marked wide; LABELS last with --show-labels. */
export function visibleColumns<T>(columns: Columns<T>, format: OutputFormat, options: PrintOptions = {}): Column<T>[] {
  const view = viewOf(columns);
  const shown = view.columns.filter((column) => format === "wide" || !column.wide);
  const { labels } = view;
  if (options.showLabels && labels !== undefined)
    shown.push({ header: "labels", value: (row) => labelList(labels(row)) });
  return shown;
}

/** Labels as kubectl's LABELS column shows them: `k=v,k2=v2`, sorted by key. */
function labelList(labels: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(labels ?? {})
    .sort()
    .map((key) => `${key}=${labels?.[key]}`)
    .join(",");
}

/**
 * Resolves once everything written to the streams so far has reached the other end (a
 * pipe's reader): what to await before the process exits. Writes to a pipe are queued
 * once its 64 KiB buffer is full, and process.exit drops the queue, cutting an error
 * report or a --json-logs record in half. Gives up after `timeoutMs` (a reader that never
 * reads) or when a stream closes.
 */
export async function flushStdio(
  streams: readonly NodeJS.WritableStream[] = [process.stdout, process.stderr],
  timeoutMs = 10_000,
): Promise<void> {
  await Promise.all(
    streams.map(
      (stream) =>
        new Promise<void>((resolve) => {
          const writable = stream as NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean };
          if (writable.destroyed || (writable.writableLength ?? 0) === 0) {
            resolve();
            return;
          }
          const timer = setTimeout(resolve, timeoutMs);
          timer.unref();
          const done = () => {
            clearTimeout(timer);
            resolve();
          };
          stream.once("error", done);
          stream.once("close", done);
          stream.write("", () => done());
        }),
    ),
  );
}

/**
 * A table cell as kubectl prints it: `<none>` for nothing. Always one line, and what the
 * controller sent (a status message, a name) cannot drive the terminal: control
 * characters, newlines and tabs are shown as escapes.
 */
export function cell(value: string | number | boolean | undefined | null): string {
  if (value === undefined || value === null || value === "") return "<none>";
  return escapeControl(String(value));
}

/** JSON for people's terminals and for programs alike: DEL, C1 and bidi characters as `\u` escapes too. */
const json = (value: unknown, indent = 2) => escapeJsonControl(JSON.stringify(value, null, indent));

// js-yaml loads only for -o yaml: loading it costs a read command ≈ 10 ms it does not need.
const yaml = async (value: unknown) =>
  (await import("js-yaml")).dump(value, { noRefs: true, lineWidth: -1, sortKeys: false });

function nameLine<T>(view: View<T>, row: T): string {
  if (view.kind === undefined || view.name === undefined) {
    throw new BugError("-o name on a view without a kind and a name (the command's view is missing them)");
  }
  return `${view.kind}/${view.name(row)}\n`;
}

function templateOf(options: PrintOptions): Template {
  if (options.template === undefined) throw new BugError("-o jsonpath=… printed without a compiled template");
  return options.template;
}

/**
 * A list as kubectl prints one with `-o json|yaml|jsonpath`: a List whose `items` are the
 * objects (`kubectl get pods -o json | jq '.items[]'`, `{.items[*].name}`). One object
 * prints as itself.
 */
export const kubeList = (items: readonly unknown[]) => ({
  apiVersion: "v1",
  items,
  kind: "List",
  metadata: { resourceVersion: "" },
});

/** What -o json|yaml|jsonpath prints for `data`: a List for an array, anything else as it is. */
const asDocument = (data: unknown) => (Array.isArray(data) ? kubeList(data) : data);

function sorted<T>(items: readonly T[], options: PrintOptions): readonly T[] {
  const { sortKey, compare } = options;
  if (sortKey === undefined || compare === undefined) return items;
  return items
    .map((item) => ({ item, key: sortKey(item) }))
    .sort((a, b) => compare(a.key, b.key))
    .map((entry) => entry.item);
}

/**
 * kubectl-style output: an aligned table with upper-case headers (table, wide), or the
 * machine forms (json, yaml, name, jsonpath=…). Returns the text for stdout; an empty
 * table returns "".
 */
export async function renderOutput<T>(
  format: OutputFormat,
  rendered: Rendered<T>,
  options: PrintOptions = {},
): Promise<string> {
  const rows = sorted(rendered.rows, options);
  const data = asDocument(rendered.data ?? rows);
  if (format === "json") return `${json(data)}\n`;
  if (format === "yaml") return yaml(data);
  if (format === "name") return rows.map((row) => nameLine(rendered, row)).join("");
  if (jsonPathTemplate(format) !== undefined) return templateOf(options).render(data);
  if (rows.length === 0) return "";
  const columns = visibleColumns(rendered, format, options);
  return formatTable(
    columns.map((column) => column.header.toUpperCase()),
    rows.map((row) => columns.map((column) => cell(column.value(row)))),
    options,
  );
}

/** Columns padded to the widest cell, three spaces apart, no trailing blanks (as kubectl prints). */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  options: Pick<PrintOptions, "noHeaders"> = {},
): string {
  // Without the header line its words take no room, as with kubectl's --no-headers.
  const widths = columnWidths(options.noHeaders ? headers.map(() => "") : headers, rows);
  const lines = [...(options.noHeaders ? [] : [headers]), ...rows].map((cells) => tableLine(cells, widths));
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

function columnWidths(headers: readonly string[], rows: readonly (readonly string[])[], from: number[] = []): number[] {
  return headers.map((header, index) =>
    Math.max(from[index] ?? 0, header.length, ...rows.map((row) => (row[index] ?? "").length)),
  );
}

function tableLine(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((text, index) => (index === cells.length - 1 ? text : text.padEnd(widths[index] ?? 0)))
    .join("   ")
    .trimEnd();
}

/** One object in the format asked for: json, yaml, name, jsonpath, or a one-row table. */
export async function formatOne<T>(
  format: OutputFormat,
  columns: Columns<T>,
  item: T,
  header = true,
  options: PrintOptions = {},
): Promise<string> {
  if (format === "json") return `${json(item)}\n`;
  if (format === "yaml") return yaml(item);
  const view = viewOf(columns);
  if (format === "name") return nameLine(view, item);
  if (jsonPathTemplate(format) !== undefined) return templateOf(options).render(item);
  const shown = visibleColumns(view, format, options);
  return formatTable(
    shown.map((column) => column.header.toUpperCase()),
    [shown.map((column) => cell(column.value(item)))],
    { noHeaders: options.noHeaders === true || !header },
  );
}

/**
 * Prints a list as its pages arrive. json, yaml and name are streamed (the output is the
 * same as printing the whole List at once: `-o json` is one kubectl-style List); a table needs
 * every row's width first, so it keeps the rows' cells — a few short strings each — and
 * prints at the end. `--sort-by` and `-o jsonpath` need every item, so they keep them.
 */
export interface ListPrinter<T> {
  add(items: readonly T[]): Promise<void>;
  /** Finishes the output; returns how many items were printed (0: the caller says "No resources found"). */
  end(): Promise<number>;
}

export function createListPrinter<T>(
  format: OutputFormat,
  columns: Columns<T>,
  write: (text: string) => Promise<void> = (text) => writeOut(text),
  options: PrintOptions = {},
): ListPrinter<T> {
  const view = viewOf(columns);
  if (options.sortKey !== undefined || jsonPathTemplate(format) !== undefined) {
    const items: T[] = [];
    return {
      async add(page) {
        items.push(...page);
      },
      async end() {
        await write(await renderOutput(format, { ...view, rows: items }, options));
        return items.length;
      },
    };
  }
  let count = 0;
  const shown = visibleColumns(view, format, options);
  const rows: string[][] = [];
  // json and yaml stream the List kubeList makes, page by page: the same text as printing it whole.
  const empty = kubeList([]);
  return {
    async add(items) {
      if (items.length === 0) return;
      if (format === "json") {
        // The page's items as they sit inside the List (one string for the page, not several
        // per item: 50,000 clusters are 100 pages).
        const page = json({ items });
        const inner = page.slice(page.indexOf("[") + 2, page.lastIndexOf("]") - 3);
        await write(`${count === 0 ? '{\n  "apiVersion": "v1",\n  "items": [\n' : ",\n"}${inner}`);
      } else if (format === "yaml") {
        const page = await yaml({ items });
        await write(`${count === 0 ? "apiVersion: v1\nitems:\n" : ""}${page.slice("items:\n".length)}`);
      } else if (format === "name") {
        await write(items.map((item) => nameLine(view, item)).join(""));
      } else {
        for (const item of items) rows.push(shown.map((column) => cell(column.value(item))));
      }
      count += items.length;
    },
    async end() {
      if (format === "json") {
        const tail = json(empty);
        await write(count === 0 ? `${tail}\n` : `\n  ]${tail.slice(tail.indexOf("],") + 1)}\n`);
      } else if (format === "yaml") {
        const whole = await yaml(empty);
        await write(count === 0 ? whole : whole.slice(whole.indexOf("kind:")));
      } else if (count > 0 && isTableFormat(format)) {
        await write(
          formatTable(
            shown.map((column) => column.header.toUpperCase()),
            rows,
            options,
          ),
        );
      }
      return count;
    },
  };
}

/**
 * What `-w` prints as changes arrive, one object (or a list's first rows) at a time:
 * table rows under one header, each padded to the widths seen so far (a column widens
 * only when a value needs it, so rows stay aligned); a YAML stream with `---` between
 * documents; JSON objects one after another; `kind/name` lines; the template per object.
 */
export interface WatchPrinter<T> {
  print(items: readonly T[]): Promise<void>;
  /** How many objects were printed. */
  readonly count: number;
}

export function createWatchPrinter<T>(
  format: OutputFormat,
  columns: Columns<T>,
  write: (text: string) => Promise<void> = (text) => writeOut(text),
  options: PrintOptions = {},
): WatchPrinter<T> {
  const view = viewOf(columns);
  const shown = visibleColumns(view, format, options);
  const headers = shown.map((column) => column.header.toUpperCase());
  let widths: number[] | undefined;
  let count = 0;
  return {
    get count() {
      return count;
    },
    async print(items) {
      if (items.length === 0) return;
      let text = "";
      if (isTableFormat(format)) {
        const rows = items.map((item) => shown.map((column) => cell(column.value(item))));
        const first = widths === undefined;
        widths = columnWidths(options.noHeaders ? headers.map(() => "") : headers, rows, widths);
        const lines = first && !options.noHeaders ? [headers, ...rows] : rows;
        text = `${lines.map((cells) => tableLine(cells, widths ?? [])).join("\n")}\n`;
      } else {
        for (const [index, item] of items.entries()) {
          if (format === "yaml") text += `${count + index === 0 ? "" : "---\n"}${await yaml(item)}`;
          else text += await formatOne(format, view, item, true, options);
        }
      }
      count += items.length;
      await write(text);
    },
  };
}

/** A plan as `--dry-run` prints it: shell lines (table, wide), or the versioned document (json, yaml). */
export async function renderPlan(plan: Plan, format: OutputFormat, redactor?: Redactor): Promise<string> {
  const options = redactor === undefined ? {} : { redactor };
  if (format === "json") return `${json(planDocument(plan, options))}\n`;
  if (format === "yaml") return yaml(planDocument(plan, options));
  return formatPlan(plan, options);
}
