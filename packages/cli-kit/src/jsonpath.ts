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
    const close = closingIndex(source, open, "}");
    if (close === -1) throw new TemplateError(`has an unclosed action at character ${open + 1}: a "{" without its "}"`);
    tokens.push({ kind: "action", text: source.slice(open + 1, close).trim() });
    i = close + 1;
  }
  return tokens;
}

/** The first `closer` after `open` outside quoted strings; -1 when it never closes. */
function closingIndex(source: string, open: number, closer: "}" | "]"): number {
  let quote: string | undefined;
  for (let i = open + 1; i < source.length; i++) {
    const char = source[i];
    if (quote !== undefined) {
      if (char === "\\") i++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === closer) return i;
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

/**
 * Where kubectl's template parser ends a field name (k8s.io/client-go/util/jsonpath,
 * parser.go isTerminator); a backslash before any character keeps it in the name, and every
 * backslash is then dropped (`app\.kubernetes\.io/name` is the key `app.kubernetes.io/name`).
 */
const TERMINATORS = new Set([" ", "\t", "\r", "\n", ".", ",", "[", "]", "$", "@", "{", "}"]);

/** A field as jsonpath-plus takes it: dot notation for a plain name, `['…']` for any other. */
function fieldStep(name: string, expression: string): string {
  if (name === "*" || /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `.${name}`;
  if (name.includes("']")) throw new TemplateError(`cannot address the key ${JSON.stringify(name)} in {${expression}}`);
  return `['${name}']`;
}

/**
 * A kubectl expression as jsonpath-plus takes it: `.a.b`, `@.a`, `$.a` and `a.b` all start
 * at `$`; field names read as kubectl's parser reads them (escaped dots, `/`, `-`); `[-1]`
 * is the last element, as kubectl has it; `['a.b']` is the path a.b, as kubectl's
 * parser turns a quoted key into a dotted path (its `['metadata.name']` example).
 */
function toJsonPath(expression: string): string {
  let path = expression.trim();
  if (path.startsWith("$") || path.startsWith("@")) path = path.slice(1);
  if (path === "" || path === ".") return "$";
  if (!path.startsWith(".") && !path.startsWith("[")) path = `.${path}`;
  let out = "$";
  let i = 0;
  while (i < path.length) {
    const char = path[i] as string;
    if (char === "." && path[i + 1] === ".") {
      out += "..";
      i += 2;
      // a field right after `..` is read below without a leading dot
      if (i < path.length && !TERMINATORS.has(path[i] as string)) {
        const read = readField(path, i);
        out += fieldStep(read.name, expression).replace(/^\./, "");
        i = read.end;
      }
      continue;
    }
    if (char === ".") {
      const read = readField(path, i + 1);
      out += read.name === "" ? "." : fieldStep(read.name, expression);
      i = read.end;
      continue;
    }
    if (char === "[") {
      const end = closingIndex(path, i, "]");
      if (end === -1) {
        out += path.slice(i);
        break;
      }
      out += bracketStep(path.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    out += char;
    i++;
  }
  return out;
}

function readField(path: string, start: number): { name: string; end: number } {
  let i = start;
  let name = "";
  while (i < path.length) {
    const char = path[i] as string;
    if (char === "\\") {
      // kubectl keeps the next character whatever it is, then drops every backslash
      if (i + 1 < path.length) name += path[i + 1];
      i += 2;
      continue;
    }
    if (TERMINATORS.has(char)) break;
    name += char;
    i++;
  }
  return { name, end: i };
}

/** The inside of `[…]` as jsonpath-plus takes it. */
function bracketStep(inner: string): string {
  const trimmed = inner.trim();
  const negative = /^-(\d+)$/.exec(trimmed);
  if (negative !== null) {
    const from = -Number(negative[1]);
    return from === -1 ? "[-1:]" : `[${from}:${from + 1}]`;
  }
  const key = /^'([^']*)'$|^"([^"]*)"$/.exec(trimmed);
  if (key !== null) {
    // kubectl reads ['a.b'] as the path .a.b
    const dotted = toJsonPath(`.${key[1] ?? key[2] ?? ""}`);
    return dotted.slice(1);
  }
  return `[${inner}]`;
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

/**
 * A number as kubectl prints it: kubectl decodes JSON integers as int64 and prints them
 * whole; other numbers are float64, printed with Go's %v: the shortest digits, with an
 * exponent when it is below -4 or at least 6 (strconv's 'g' rule for the shortest
 * precision): 1.5, 1.2345675e+06, 1e-05. (An integer beyond 2^53 has lost digits in
 * JSON.parse already; kubectl keeps them.)
 */
function goNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 2 ** 63) return String(value);
  if (!Number.isFinite(value)) return value > 0 ? "+Inf" : value < 0 ? "-Inf" : "NaN";
  const [mantissa = "", exponentText = "0"] = value.toExponential().split("e");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  return String(value);
}

/** A string as Go's encoding/json writes it: <, > and & as \u escapes, and U+2028/U+2029 too. */
function goString(text: string): string {
  return JSON.stringify(text).replace(
    /[<>&\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** A structured value as kubectl's jsonpath prints it: Go's json.Marshal (map keys sorted, no spaces). */
function goJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return goString(value);
  if (typeof value === "number") return goNumber(value);
  if (typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, entry]) => `${goString(key)}:${goJson(entry)}`).join(",")}}`;
}

/** A value as kubectl's jsonpath prints it: text as is, a number as Go prints it, anything structured as Go's JSON. */
function format(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return goNumber(value);
  if (value === null || value === undefined) return "null";
  if (typeof value === "object") return goJson(value);
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
