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

/**
 * kubectl-style output: an aligned table with upper-case headers (table, wide), or the
 * machine form (json, yaml). Returns the text for stdout; an empty table returns "".
 */
export function renderOutput<T>(format: OutputFormat, rendered: Rendered<T>): string {
  const data = rendered.data ?? rendered.rows;
  switch (format) {
    case "json":
      return `${JSON.stringify(data, null, 2)}\n`;
    case "yaml":
      return dump(data, { noRefs: true, lineWidth: -1, sortKeys: false });
    case "table":
    case "wide": {
      const columns = rendered.columns.filter((column) => format === "wide" || !column.wide);
      if (rendered.rows.length === 0) return "";
      return formatTable(
        columns.map((column) => column.header.toUpperCase()),
        rendered.rows.map((row) => columns.map((column) => cell(column.value(row)))),
      );
    }
  }
}

function cell(value: string | number | boolean | undefined | null): string {
  if (value === undefined || value === null || value === "") return "<none>";
  return String(value);
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
