import { once } from "node:events";
import { escapeControl, escapeJsonControl } from "@nodekit/errors";
import { formatPlan, type Plan, planDocument } from "@nodekit/plan";
import type { Redactor } from "@nodekit/process";
import { dump } from "js-yaml";

export const OUTPUT_FORMATS = ["table", "wide", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | undefined | null;
  /** Shown only with `-o wide`. */
  wide?: boolean;
}

export interface Rendered<T> {
  rows: readonly T[];
  columns: readonly Column<T>[];
  /** What `-o json|yaml` prints; defaults to the rows. */
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

/** The columns a format shows: all with `-o wide`, else those not marked wide. */
export function visibleColumns<T>(columns: readonly Column<T>[], format: OutputFormat): Column<T>[] {
  return columns.filter((column) => format === "wide" || !column.wide);
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

const yaml = (value: unknown) => dump(value, { noRefs: true, lineWidth: -1, sortKeys: false });

/**
 * kubectl-style output: an aligned table with upper-case headers (table, wide), or the
 * machine form (json, yaml). Returns the text for stdout; an empty table returns "".
 */
export function renderOutput<T>(format: OutputFormat, rendered: Rendered<T>): string {
  const data = rendered.data ?? rendered.rows;
  switch (format) {
    case "json":
      return `${json(data)}\n`;
    case "yaml":
      return yaml(data);
    case "table":
    case "wide": {
      if (rendered.rows.length === 0) return "";
      const columns = visibleColumns(rendered.columns, format);
      return formatTable(
        columns.map((column) => column.header.toUpperCase()),
        rendered.rows.map((row) => columns.map((column) => cell(column.value(row)))),
      );
    }
  }
}

/** Columns padded to the widest cell, three spaces apart, no trailing blanks (as kubectl prints). */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, index) =>
    Math.max(header.length, ...rows.map((row) => (row[index] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((text, index) => (index === cells.length - 1 ? text : text.padEnd(widths[index] ?? 0)))
      .join("   ")
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join("\n")}\n`;
}

/** One object in the format asked for: json, yaml, or a one-row table (without its header for `-w` rows after the first). */
export function formatOne<T>(format: OutputFormat, columns: readonly Column<T>[], item: T, header = true): string {
  if (format === "json") return `${json(item)}\n`;
  if (format === "yaml") return yaml(item);
  const shown = visibleColumns(columns, format);
  const table = formatTable(
    shown.map((column) => column.header.toUpperCase()),
    [shown.map((column) => cell(column.value(item)))],
  );
  return header ? table : table.slice(table.indexOf("\n") + 1);
}

/**
 * Prints a list as its pages arrive. json and yaml are streamed (the output is the same as
 * printing the whole array at once: `-o json` is one JSON array); a table needs every
 * row's width first, so it keeps the rows' cells — a few short strings each — and prints
 * at the end.
 */
export interface ListPrinter<T> {
  add(items: readonly T[]): Promise<void>;
  /** Finishes the output; returns how many items were printed (0: the caller says "No resources found"). */
  end(): Promise<number>;
}

export function createListPrinter<T>(
  format: OutputFormat,
  columns: readonly Column<T>[],
  write: (text: string) => Promise<void> = (text) => writeOut(text),
): ListPrinter<T> {
  let count = 0;
  const shown = visibleColumns(columns, format);
  const rows: string[][] = [];
  return {
    async add(items) {
      if (items.length === 0) return;
      if (format === "json") {
        const body = items.map((item) => `  ${json(item).replaceAll("\n", "\n  ")}`).join(",\n");
        await write(`${count === 0 ? "[\n" : ",\n"}${body}`);
      } else if (format === "yaml") {
        await write(yaml(items));
      } else {
        for (const item of items) rows.push(shown.map((column) => cell(column.value(item))));
      }
      count += items.length;
    },
    async end() {
      if (format === "json") await write(count === 0 ? "[]\n" : "\n]\n");
      else if (format === "yaml") {
        if (count === 0) await write("[]\n");
      } else if (count > 0) {
        await write(
          formatTable(
            shown.map((column) => column.header.toUpperCase()),
            rows,
          ),
        );
      }
      return count;
    },
  };
}

/** A plan as `--dry-run` prints it: shell lines (table, wide), or the versioned document (json, yaml). */
export function renderPlan(plan: Plan, format: OutputFormat, redactor?: Redactor): string {
  const options = redactor === undefined ? {} : { redactor };
  if (format === "json") return `${json(planDocument(plan, options))}\n`;
  if (format === "yaml") return yaml(planDocument(plan, options));
  return formatPlan(plan, options);
}
