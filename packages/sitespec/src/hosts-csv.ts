import type { Problem } from "@nodekit/errors";
import { CsvError, type InfoRecord, parse } from "csv-parse/sync";
import {
  ekThumbprintProblem,
  FirstSeen,
  hostNameProblem,
  ipIdentity,
  ipProblem,
  normalizeEkThumbprint,
  normalizeIp,
} from "./fields.ts";

/** One host from the hosts CSV, with its values normalized. */
export interface Host {
  /** The host's name, a DNS-1123 label; it becomes the Kubernetes node name. */
  name: string;
  /** IPv4, or IPv6 in RFC 5952 form. */
  ip: string;
  /** SHA-256 of the TPM endorsement key, 64 lowercase hex digits. Present turns on TPM attestation. */
  tpmEkThumbprint?: string;
}

export interface ParseHostsCsvOptions {
  /** The file name to put in problems, as the user gave it. */
  source: string;
}

export interface ParsedHosts {
  /** The rows that have no problem of their own, in file order. Use them only when `problems` holds no error. */
  hosts: Host[];
  /** Every problem in the file, in file order: errors, and warnings for unknown columns. */
  problems: Problem[];
}

/** The columns the hosts CSV understands, in the order they are documented. */
export const HOSTS_CSV_COLUMNS = ["name", "ip", "tpm_ek_thumbprint"] as const;
type Column = (typeof HOSTS_CSV_COLUMNS)[number];
const REQUIRED_COLUMNS: readonly Column[] = ["name", "ip"];
const KNOWN_COLUMNS = new Set<string>(HOSTS_CSV_COLUMNS);

/** A record as csv-parse gives it, or a stretch of the file it could not read. */
type Entry =
  | { kind: "record"; cells: string[]; line: number; raw: string }
  | { kind: "unreadable"; line: number; message: string; value: string };

interface Header {
  line: number;
  width: number;
  cells: string[];
  columns: Map<Column, number>;
}

interface RowPlace {
  row: number;
  line: number;
}

/** The first row each name, IP and thumbprint appeared on. */
interface Seen {
  names: FirstSeen<RowPlace>;
  ips: FirstSeen<RowPlace>;
  thumbprints: FirstSeen<RowPlace>;
}

type Report = (problem: Omit<Problem, "source" | "severity">, severity?: Problem["severity"]) => void;

/**
 * Reads a hosts CSV: a header line naming the columns, then one host per line.
 * Reports every problem in the file in one pass, each with the file, line, row, column
 * and value, instead of stopping at the first. The format is in docs/sitespec.md.
 */
export function parseHostsCsv(text: string, options: ParseHostsCsvOptions): ParsedHosts {
  const { source } = options;
  const problems: Problem[] = [];
  const hosts: Host[] = [];
  const report: Report = (problem, severity = "error") => {
    problems.push({ severity, source, ...problem });
  };

  const seen: Seen = { names: new FirstSeen(), ips: new FirstSeen(), thumbprints: new FirstSeen() };
  let header: Header | undefined;
  let row = 0;

  for (const entry of readEntries(text)) {
    if (entry.kind === "unreadable") {
      if (header === undefined) {
        // Without a header there are no columns to read the rest of the file by.
        report({ line: entry.line, value: entry.value, message: `${entry.message}; the header could not be read` });
        return { hosts: [], problems };
      }
      row += 1;
      report({ line: entry.line, row, value: entry.value, message: entry.message });
      continue;
    }
    if (entry.cells.every((cell) => cell === "")) continue;
    if (header === undefined) {
      header = readHeader(entry.cells, entry.line, report);
      continue;
    }
    row += 1;
    const at: RowPlace = { line: entry.line, row };
    if (entry.cells.length !== header.width) {
      report({
        ...at,
        value: entry.raw,
        message: `has ${entry.cells.length} ${plural(entry.cells.length, "cell")}, but the header has ${header.width} ${plural(header.width, "column")} (${listCells(header.cells)}); every row needs one cell per column, empty where a value is optional`,
      });
      continue;
    }
    const host = readRow(entry.cells, header, at, seen, report);
    if (host !== undefined) hosts.push(host);
  }

  if (header === undefined) {
    report({
      message: `is empty; expected a header line naming the columns (${REQUIRED_COLUMNS.join(", ")}, and optionally tpm_ek_thumbprint), then one line per host`,
    });
  } else if (row === 0) {
    report({ line: header.line, message: "has a header but no hosts; add one line per host below the header" });
  }
  return { hosts, problems };
}

/** Checks one row's cells and returns its host, when the row has no problem of its own. */
function readRow(cells: readonly string[], header: Header, at: RowPlace, seen: Seen, report: Report): Host | undefined {
  const cell = (column: Column): string | undefined => {
    const index = header.columns.get(column);
    return index === undefined ? undefined : (cells[index] ?? "");
  };
  let valid = true;
  const name = cell("name");
  // A problem in another column names the host too: in a long file "row 212" alone is hard to find.
  const named = name === undefined || name === "" ? {} : { rowName: name };
  const fail = (column: Column, value: string, message: string) => {
    report({ ...at, ...(column === "name" ? {} : named), column, value, message });
    valid = false;
  };

  if (name !== undefined) {
    const fault = hostNameProblem(name) ?? repeated(seen.names.claim(name, name, at), "host name");
    if (fault !== undefined) fail("name", name, fault);
  }

  const rawIp = cell("ip");
  let ip: string | undefined;
  if (rawIp !== undefined) {
    let fault = ipProblem(rawIp);
    if (fault === undefined) {
      ip = normalizeIp(rawIp);
      fault = repeated(seen.ips.claim(ipIdentity(ip), rawIp, at), "IP address", rawIp);
    }
    if (fault !== undefined) fail("ip", rawIp, fault);
  }

  const rawThumbprint = cell("tpm_ek_thumbprint");
  let thumbprint: string | undefined;
  if (rawThumbprint !== undefined && rawThumbprint !== "") {
    let fault = ekThumbprintProblem(rawThumbprint);
    if (fault === undefined) {
      thumbprint = normalizeEkThumbprint(rawThumbprint);
      const earlier = seen.thumbprints.claim(thumbprint, rawThumbprint, at);
      fault = repeated(earlier, "TPM EK thumbprint", rawThumbprint, "; a TPM belongs to one host");
    }
    if (fault !== undefined) fail("tpm_ek_thumbprint", rawThumbprint, fault);
  }

  if (!valid || name === undefined || ip === undefined) return undefined;
  return thumbprint === undefined ? { name, ip } : { name, ip, tpmEkThumbprint: thumbprint };
}

function readHeader(cells: string[], line: number, report: Report): Header {
  const columns = new Map<Column, number>();
  const seen = new Map<string, number>();
  const known = HOSTS_CSV_COLUMNS.join(", ");
  cells.forEach((cell, index) => {
    const name = cell.toLowerCase();
    const position = index + 1;
    if (name === "") {
      report({ line, column: position, message: "has no name in the header; its cells are ignored" }, "warning");
      return;
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      report({
        line,
        column: cell,
        message: `appears more than once in the header (columns ${earlier} and ${position}); name each column once`,
      });
      return;
    }
    seen.set(name, position);
    if (isColumn(name)) columns.set(name, index);
    else {
      report(
        {
          line,
          column: cell,
          message: `is not a known column and its cells are ignored; the known columns are ${known}`,
        },
        "warning",
      );
    }
  });
  const missing = REQUIRED_COLUMNS.filter((column) => !columns.has(column));
  if (missing.length > 0) {
    const found = listCells(cells);
    report({
      line,
      message: `the header lacks the required ${plural(missing.length, "column")} ${missing.join(" and ")} (it names: ${found}); the first non-empty line must name the columns ${known}`,
    });
  }
  return { line, width: cells.length, cells, columns };
}

function listCells(cells: readonly string[]): string {
  return cells.map((cell) => cell || "(empty)").join(", ");
}

function isColumn(name: string): name is Column {
  return KNOWN_COLUMNS.has(name);
}

function repeated(
  earlier: { place: RowPlace; spelling: string } | undefined,
  what: string,
  spelling?: string,
  why = "",
): string | undefined {
  if (earlier === undefined) return undefined;
  const written =
    spelling !== undefined && earlier.spelling !== spelling ? `, written ${JSON.stringify(earlier.spelling)}` : "";
  return `is a duplicate ${what}: row ${earlier.place.row} (line ${earlier.place.line}) already has it${written}${why}`;
}

function plural(count: number, noun: string): string {
  return count === 1 ? noun : `${noun}s`;
}

/**
 * Splits the text into records with csv-parse, and keeps going past malformed quoting:
 * csv-parse stops at the first such error, so each one becomes an entry and parsing
 * resumes on the next line. Lines are counted after turning CRLF and lone CR into LF,
 * which keeps every physical line where it was.
 */
function readEntries(text: string): Entry[] {
  const entries: Entry[] = [];
  let rest = text.replace(/\r\n?/g, "\n");
  let linesBefore = 0;
  for (;;) {
    let lastLine = linesBefore;
    const base = linesBefore;
    try {
      parse(rest, {
        bom: true,
        trim: true,
        skip_empty_lines: true,
        relax_column_count: true,
        record_delimiter: "\n",
        raw: true,
        on_record: (record: unknown, context: InfoRecord) => {
          const { record: cells, raw } = record as { record: string[]; raw: string };
          const end = base + context.lines;
          // A quoted cell may hold line breaks; the record starts that many lines up.
          const spanned = cells.reduce((sum, cell) => sum + countLineBreaks(cell), 0);
          // csv-parse trims around quotes but not inside them; a value never keeps either.
          entries.push({
            kind: "record",
            cells: cells.map((cell) => cell.trim()),
            line: end - spanned,
            raw: raw.trim(),
          });
          lastLine = end;
          return null;
        },
      });
      return entries;
    } catch (error) {
      const lines = error instanceof CsvError && typeof error.lines === "number" ? error.lines : undefined;
      if (!(error instanceof CsvError) || lines === undefined) {
        const message = error instanceof Error ? error.message : String(error);
        entries.push({
          kind: "unreadable",
          line: lastLine + 1,
          message: `could not be read as CSV: ${message}`,
          value: "",
        });
        return entries;
      }
      if (error.code === "CSV_QUOTE_NOT_CLOSED") {
        const restLines = rest.split("\n");
        // csv-parse reports the end of the file; the user needs the line the quote opened on.
        let opened = lastLine - base;
        while (opened < restLines.length && (restLines[opened] ?? "").trim() === "") opened += 1;
        const line = base + opened + 1;
        const last = base + restLines.length - (rest.endsWith("\n") ? 1 : 0);
        entries.push({
          kind: "unreadable",
          line,
          value: excerpt(restLines[opened] ?? ""),
          message: `opens a quoted cell that is never closed, so the rest of the file (lines ${line}–${last}) could not be read; close the quote, and double any quote inside a quoted cell ("")`,
        });
        return entries;
      }
      const { start, end } = findLine(rest, lines);
      entries.push({
        kind: "unreadable",
        line: base + lines,
        value: excerpt(rest.slice(start, end)),
        message: quotingMessage(error),
      });
      rest = rest.slice(end + 1);
      linesBefore = base + lines;
      if (rest.trim() === "") return entries;
    }
  }
}

function quotingMessage(error: CsvError): string {
  switch (error.code) {
    case "INVALID_OPENING_QUOTE":
      return 'has a quote (") inside a cell that does not start with one; quote the whole cell and double the quote inside it (like "a""b")';
    case "CSV_INVALID_CLOSING_QUOTE":
    case "CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE":
      return 'has text after the closing quote of a quoted cell; a quoted cell must end at its closing quote, with any quote inside it doubled (like "a""b")';
    case "CSV_MAX_RECORD_SIZE":
      return "is too long to be one row of a hosts file; check for a quote that is never closed";
    default:
      return `could not be read as CSV: ${error.message}`;
  }
}

/** Offsets of 1-based line `number` in `text`: [start, end), end at its "\n" or the end of the text. */
function findLine(text: string, number: number): { start: number; end: number } {
  let start = 0;
  for (let line = 1; line < number; line += 1) {
    const next = text.indexOf("\n", start);
    if (next === -1) return { start: text.length, end: text.length };
    start = next + 1;
  }
  const end = text.indexOf("\n", start);
  return { start, end: end === -1 ? text.length : end };
}

function countLineBreaks(cell: string): number {
  let count = 0;
  for (let index = cell.indexOf("\n"); index !== -1; index = cell.indexOf("\n", index + 1)) count += 1;
  return count;
}

function excerpt(line: string): string {
  const trimmed = line.trim();
  return trimmed.length > 120 ? `${trimmed.slice(0, 119)}…` : trimmed;
}
