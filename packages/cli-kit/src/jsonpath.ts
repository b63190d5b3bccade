import { JSONPath } from "jsonpath-plus";

// kubectl's JSONPath templates (`-o jsonpath='{range .items[*]}{.name}{"\n"}{end}'`):
// text, `{expression}` actions, `{"literal"}` strings and `{range …}…{end}` loops. The
// expressions themselves are JSONPath, evaluated by jsonpath-plus; this module only reads
// the template around them, as kubectl's own template parser does.

/** A compiled `-o jsonpath=` template. */
export interface Template {
  /** The template as given. */
  readonly source: string;
  /** The output for one document (an object, or `{ items: [...] }` for a list). */
  render(data: unknown): string;
}

/** Why a template (or a --sort-by expression) cannot be used, in words. */
export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

type Node =
  | { kind: "text"; text: string }
  | { kind: "path"; path: string }
  | { kind: "range"; path: string; body: Node[] };

/** Parses a kubectl JSONPath template; throws TemplateError saying what is wrong and where. */
export function compileTemplate(source: string): Template {
  const tokens = tokenize(source);
  const { nodes } = parseNodes(tokens, 0, undefined);
  return { source, render: (data) => renderNodes(nodes, data) };
}

type Token = { kind: "text"; text: string } | { kind: "action"; text: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const open = source.indexOf("{", i);
    if (open === -1) {
      tokens.push({ kind: "text", text: source.slice(i) });
      break;
    }
    if (open > i) tokens.push({ kind: "text", text: source.slice(i, open) });
    const close = findClose(source, open);
    if (close === -1) throw new TemplateError(`has an unclosed action at character ${open + 1}: a "{" without its "}"`);
    tokens.push({ kind: "action", text: source.slice(open + 1, close).trim() });
    i = close + 1;
  }
  return tokens;
}

/** The "}" that closes the action opened at `open`, skipping quoted strings. */
function findClose(source: string, open: number): number {
  let quote: string | undefined;
  for (let i = open + 1; i < source.length; i++) {
    const char = source[i];
    if (quote !== undefined) {
      if (char === "\\") i++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === "}") return i;
  }
  return -1;
}

/** The nodes from `start` up to the `{end}` of `range` (or the end of the template when outside one). */
function parseNodes(tokens: Token[], start: number, range: string | undefined): { nodes: Node[]; next: number } {
  const nodes: Node[] = [];
  let i = start;
  while (i < tokens.length) {
    const token = tokens[i] as Token;
    i++;
    if (token.kind === "text") {
      nodes.push({ kind: "text", text: token.text });
      continue;
    }
    const action = token.text;
    if (action === "end") {
      if (range === undefined) throw new TemplateError("has an {end} without a {range} before it");
      return { nodes, next: i };
    }
    const opens = /^range\s+(.+)$/.exec(action);
    if (opens !== null) {
      const expression = opens[1] ?? "";
      const inner = parseNodes(tokens, i, expression);
      nodes.push({ kind: "range", path: checkPath(expression), body: inner.nodes });
      i = inner.next;
      continue;
    }
    if (action === "") throw new TemplateError("has an empty action {}");
    const literal = stringLiteral(action);
    nodes.push(literal !== undefined ? { kind: "text", text: literal } : { kind: "path", path: checkPath(action) });
  }
  if (range !== undefined) throw new TemplateError(`has a {range ${range.trim()}} without its {end}`);
  return { nodes, next: i };
}

/** `"\n"` or `'\t'` → the text, escapes read as in Go (kubectl's strconv.Unquote). */
function stringLiteral(action: string): string | undefined {
  if (action.length < 2) return undefined;
  const quote = action[0];
  if ((quote !== '"' && quote !== "'") || action.at(-1) !== quote) return undefined;
  const body = action.slice(1, -1);
  const escapes: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0" };
  return body.replace(/\\(.)/g, (_match, char: string) => escapes[char] ?? char);
}

/** A kubectl expression as jsonpath-plus takes it: `.a.b`, `@.a`, `$.a` and `a.b` all start at `$`. */
function toJsonPath(expression: string): string {
  let path = expression.trim();
  if (path.startsWith("$") || path.startsWith("@")) path = path.slice(1);
  if (path === "" || path === ".") return "$";
  if (!path.startsWith(".") && !path.startsWith("[")) path = `.${path}`;
  return `$${path}`;
}

function checkPath(expression: string): string {
  const path = toJsonPath(expression);
  let depth = 0;
  for (const char of path) {
    if (char === "[") depth++;
    else if (char === "]") depth--;
    if (depth < 0) break;
  }
  if (depth !== 0) throw new TemplateError(`has unbalanced brackets in {${expression.trim()}}`);
  if (/\.\.\.|\.$/.test(path) && path !== "$") throw new TemplateError(`has an incomplete path {${expression.trim()}}`);
  return path;
}

function evaluate(path: string, current: unknown): unknown[] {
  // `$` is the object the action applies to: the document, or the element of the {range} around it.
  try {
    return JSONPath({ path, json: (current ?? null) as object, wrap: true, eval: "safe", ignoreEvalErrors: true });
  } catch (error) {
    throw new TemplateError(`cannot evaluate ${path.replace(/^\$/, "")}: ${(error as Error).message}`);
  }
}

function renderNodes(nodes: Node[], current: unknown): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") out += node.text;
    else if (node.kind === "path") out += evaluate(node.path, current).map(format).join(" ");
    else {
      const results = evaluate(node.path, current);
      // kubectl ranges over the elements of a single list result, or over the results themselves.
      const elements = results.length === 1 && Array.isArray(results[0]) ? (results[0] as unknown[]) : results;
      for (const element of elements) out += renderNodes(node.body, element);
    }
  }
  return out;
}

/** A value as kubectl's jsonpath prints it: text as is, anything structured as JSON. */
function format(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * A `--sort-by` key: a JSONPath expression (`.name`, `{.status.phase}`) whose value, for
 * each item, orders the list. Throws TemplateError for an expression it cannot read.
 */
export function compileSortKey(expression: string): (item: unknown) => unknown {
  const trimmed = expression.trim();
  const inner = trimmed.startsWith("{") && trimmed.endsWith("}") ? trimmed.slice(1, -1) : trimmed;
  if (inner.trim() === "") throw new TemplateError("is empty: give a field such as .name");
  const path = checkPath(inner);
  return (item) => evaluate(path, item)[0];
}

/** Orders two sort-key values: numbers by value, everything else as text; a missing value first. */
export function compareSortValues(a: unknown, b: unknown): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  const [x, y] = [typeof a === "string" ? a : JSON.stringify(a), typeof b === "string" ? b : JSON.stringify(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
