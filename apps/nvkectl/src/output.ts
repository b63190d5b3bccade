import { once } from "node:events";
import { type Column, formatTable, type OutputFormat } from "@nodekit/cli-kit";
import { dump } from "js-yaml";

/** Writes to stdout, waiting when the pipe is full, so that a long list never piles up in memory. */
export async function writeStdout(text: string): Promise<void> {
  if (text === "") return;
  if (!process.stdout.write(text)) await once(process.stdout, "drain");
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
  write: (text: string) => Promise<void> = writeStdout,
): ListPrinter<T> {
  let count = 0;
  const shown = columns.filter((column) => format === "wide" || !column.wide);
  const rows: string[][] = [];
  return {
    async add(items) {
      if (items.length === 0) return;
      if (format === "json") {
        const body = items.map((item) => indent(JSON.stringify(item, null, 2))).join(",\n");
        await write(`${count === 0 ? "[\n" : ",\n"}${body}`);
      } else if (format === "yaml") {
        await write(dump(items, { noRefs: true, lineWidth: -1, sortKeys: false }));
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

/** One object in the format asked for: json, yaml, or a one-row table. */
export function formatOne<T>(format: OutputFormat, columns: readonly Column<T>[], item: T, header = true): string {
  if (format === "json") return `${JSON.stringify(item, null, 2)}\n`;
  if (format === "yaml") return dump(item, { noRefs: true, lineWidth: -1, sortKeys: false });
  const shown = columns.filter((column) => format === "wide" || !column.wide);
  const table = formatTable(
    shown.map((column) => column.header.toUpperCase()),
    [shown.map((column) => cell(column.value(item)))],
  );
  return header ? table : table.slice(table.indexOf("\n") + 1);
}

function indent(text: string): string {
  return `  ${text.replaceAll("\n", "\n  ")}`;
}

function cell(value: string | number | boolean | undefined | null): string {
  if (value === undefined || value === null || value === "") return "<none>";
  return String(value);
}
