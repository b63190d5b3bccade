import { escapeControl, escapeJsonControl } from "./escape.ts";

/**
 * A problem found in user input, with the place it was found. Parsers return every
 * problem they find rather than stopping at the first, so that one run tells the user
 * everything to fix.
 */
export interface Problem {
  severity: "error" | "warning";
  /** The file (or other named input) the problem is in, as the user named it. */
  source: string;
  /** 1-based line in the source, when known. */
  line?: number;
  /** 1-based data row (CSV: not counting the header), when the input is tabular. */
  row?: number;
  /** What the row is called (a hosts CSV row's host name), so that a long file's problem names it as well as its number. */
  rowName?: string;
  /** Column name (CSV) or 1-based column number, when known. */
  column?: string | number;
  /** Path to the field inside a structured document, e.g. ["images", "controller"]. */
  path?: ReadonlyArray<string | number>;
  /** The offending value, as found (never a secret): text is quoted back, a number or true/false is not. */
  value?: string | number | boolean;
  message: string;
}

export function isError(problem: Problem): boolean {
  return problem.severity === "error";
}

export function hasErrors(problems: ReadonlyArray<Problem>): boolean {
  return problems.some(isError);
}

/**
 * `hosts.csv:4: row 3 (node-c), column ip: "10.0.0.300" is not a valid IPv4 or IPv6 address`.
 * One line whatever the input held: the file name, column and field names (which come
 * from the input) and the message have their control characters escaped, so a hostile
 * file cannot drive the terminal that shows its problems.
 */
export function formatProblem(problem: Problem): string {
  let where = escapeControl(problem.source);
  if (problem.line !== undefined) where += `:${problem.line}`;
  const parts: string[] = [];
  if (problem.row !== undefined) {
    parts.push(
      problem.rowName === undefined ? `row ${problem.row}` : `row ${problem.row} (${escapeControl(problem.rowName)})`,
    );
  }
  if (problem.column !== undefined) parts.push(`column ${escapeControl(String(problem.column))}`);
  if (problem.path !== undefined && problem.path.length > 0)
    parts.push(`field ${escapeControl(formatPath(problem.path))}`);
  const location = parts.length > 0 ? ` ${parts.join(", ")}:` : "";
  const value = problem.value !== undefined ? ` ${escapeJsonControl(JSON.stringify(problem.value))}` : "";
  return `${where}:${location}${value} ${escapeControl(problem.message)}`;
}

/** ["images", "controller"] → images.controller; ["items", 2, "name"] → items[2].name */
export function formatPath(path: ReadonlyArray<string | number>): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}
