// A decoder for the plain block YAML that programs write and people edit (what js-yaml's
// `dump` emits for a config file, plus comments and blank lines), without js-yaml: loading
// and first running js-yaml costs a short-lived CLI ≈ 15 ms, more than reading the file.
// It is a fast path, not a parser: for anything it is not certain to read exactly as
// js-yaml's `load` (default schema) would, it declines, and the caller runs the full
// parser, which also gives the located problems. plain-yaml.test.ts holds the two equal.

/** Why the decoder gives up; caught at the top, never seen by a caller. */
const DECLINE: unique symbol = Symbol("decline");

// What js-yaml refuses as "non-printable", and what this decoder does not read: tabs (in
// indentation they are an error, elsewhere they are rare), a CR not ending a line, NEL,
// the Unicode line and paragraph separators, a byte-order mark in the text.
const UNREAD =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\x00-\x09\x0B\x0C\x0E-\x1F\x7F-\x9F\u2028\u2029\uFEFF\uFFFE\uFFFF]|\r(?!\n)|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;

/**
 * A text of printable ASCII and line feeds only, which UNREAD cannot match (every character it
 * matches is outside this class): the common case, told by a pattern V8 compiles far faster
 * than UNREAD's, so UNREAD is compiled only for a text with something else in it.
 */
const PLAIN_ASCII = /^[\x20-\x7E\n]*$/;

/** `key:` then the rest of the line; keys that need quotes, or that resolve to a non-string, are not read. */
const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$/;
const SEQUENCE_ITEM = /^-(?: +(.*))?$/;
/** A comment after a value (YAML needs the space before `#`), or nothing. */
const TAIL = /^(?: +#.*)?$/;

// js-yaml's default (YAML 1.2 core) schema: a plain scalar matching one of these is not a string.
const NOT_STRINGS = new Set(["", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"]);
const CORE_INT = /^(?:0o[0-7]+|0x[0-9a-fA-F]+|[-+]?[0-9]+)$/;
const CORE_FLOAT =
  /^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** What CORE_INT and CORE_FLOAT can start with (char codes): digits, `+`, `-`, `.`. */
const NUMBER_START = new Set([43, 45, 46, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57]);

/** A plain scalar may not start with these (`-`, `?` and `:` may, when a non-space follows). */
// (An array literal: spreading a string at import runs its iterator in every process, ≈ 0.15 ms.)
const INDICATORS = new Set([
  "-",
  "?",
  ":",
  ",",
  "[",
  "]",
  "{",
  "}",
  "#",
  "&",
  "*",
  "!",
  "|",
  ">",
  "'",
  '"',
  "%",
  "@",
  "`",
]);

const ESCAPES: Readonly<Record<string, string>> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\x85",
  _: "\xa0",
  L: "\u2028",
  P: "\u2029",
};
const HEX_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/** Deeper than this is declined (js-yaml refuses 100 levels). */
const MAX_DEPTH = 50;

interface Line {
  indent: number;
  text: string;
  comment: boolean;
}

/**
 * The value of a one-document block-YAML text, exactly as js-yaml's `load` returns it, or
 * `undefined` when the text uses anything this decoder does not read: flow collections
 * (but `[]` and `{}`), anchors, aliases, tags, block scalars (`|`, `>`), multi-line or
 * non-string plain scalars (`true`, `null`, numbers), quoted keys, directives, more than
 * one document, tabs, an empty document, or anything invalid. Then parse it with
 * `readYamlDocuments` (from `@nodekit/documents`), which also locates the problems.
 *
 * What it reads: block mappings and sequences (nested, compact `- key: value` items, a
 * sequence at its key's indentation), plain, single-quoted and double-quoted scalars,
 * comments, blank lines, CRLF line ends, one leading `---`.
 */
export function decodePlainYaml(text: string): unknown {
  if (!PLAIN_ASCII.test(text) && UNREAD.test(text)) return undefined;
  const lines = contentLines(text);
  if (lines === undefined) return undefined;
  try {
    return new Decoder(lines).document();
  } catch (error) {
    if (error === DECLINE) return undefined;
    throw error;
  }
}

function contentLines(text: string): Line[] | undefined {
  const lines: Line[] = [];
  let started = false;
  for (const raw of text.split("\n")) {
    // The line without its CR and trailing spaces, and its indentation, by character code.
    let end = raw.length;
    if (raw.charCodeAt(end - 1) === 13 /* \r */) end--;
    while (end > 0 && raw.charCodeAt(end - 1) === 32) end--;
    if (end === 0) continue;
    let indent = 0;
    while (raw.charCodeAt(indent) === 32) indent++;
    const content = raw.slice(indent, end);
    const comment = content.charCodeAt(0) === 35; /* # */
    if (indent === 0 && !comment) {
      // Directives, document markers: only one `---`, before everything.
      if (content.startsWith("%")) return undefined;
      if (content.startsWith("---") || content.startsWith("...")) {
        if (/^(?:---|\.\.\.)(?: |$)/.test(content)) {
          if (started || !/^---(?: +#.*)?$/.test(content)) return undefined;
          started = true;
          continue;
        }
      }
    }
    if (!comment) started = true;
    lines.push({ indent, text: content, comment });
  }
  return lines;
}

class Decoder {
  private readonly lines: Line[];
  private position = 0;
  private depth = 0;

  constructor(lines: Line[]) {
    this.lines = lines;
  }

  document(): unknown {
    const first = this.content();
    if (first === undefined) throw DECLINE;
    const value = this.block(first.indent);
    if (this.content() !== undefined) throw DECLINE;
    return value;
  }

  /** The next line that is not a comment (moving past the comments), or undefined at the end. */
  private content(): Line | undefined {
    while (this.position < this.lines.length && this.lines[this.position]?.comment) this.position++;
    return this.lines[this.position];
  }

  /** The mapping or sequence whose first line is the current one, at `indent`. */
  private block(indent: number): unknown {
    const line = this.content();
    if (line === undefined || line.indent !== indent) throw DECLINE;
    if (++this.depth > MAX_DEPTH) throw DECLINE;
    let value: unknown;
    if (SEQUENCE_ITEM.test(line.text)) value = this.sequence(indent, false);
    else if (KEY_LINE.test(line.text)) value = this.mapping(indent);
    else throw DECLINE;
    this.depth--;
    return value;
  }

  private mapping(indent: number): Record<string, unknown> {
    const mapping: Record<string, unknown> = {};
    for (let line = this.content(); line !== undefined && line.indent >= indent; line = this.content()) {
      if (line.indent > indent) throw DECLINE;
      const match = KEY_LINE.exec(line.text);
      const key = match?.[1];
      if (key === undefined || NOT_STRINGS.has(key) || key === "__proto__" || Object.hasOwn(mapping, key)) {
        throw DECLINE;
      }
      this.position++;
      mapping[key] = this.value(match?.[2] ?? "", indent, true);
    }
    return mapping;
  }

  private sequence(indent: number, atKeyIndent: boolean): unknown[] {
    const sequence: unknown[] = [];
    for (let line = this.content(); line !== undefined && line.indent >= indent; line = this.content()) {
      if (line.indent > indent) throw DECLINE;
      const match = SEQUENCE_ITEM.exec(line.text);
      if (match === null) {
        // The next key of the mapping this sequence is a value of, at the key's indentation.
        if (atKeyIndent) break;
        throw DECLINE;
      }
      const rest = match[1] ?? "";
      if (rest === "" || rest.startsWith("#")) {
        this.position++;
        sequence.push(this.value("", indent, false));
      } else if (SEQUENCE_ITEM.test(rest) || KEY_LINE.test(rest)) {
        // A compact item (`- name: lab`): the item is a block starting at its column.
        const column = indent + line.text.length - rest.length;
        this.lines[this.position] = { indent: column, text: rest, comment: false };
        sequence.push(this.block(column));
      } else {
        this.position++;
        sequence.push(this.value(rest, indent, false));
      }
    }
    return sequence;
  }

  /** What follows `key:` or `-` on a line at `indent`: a scalar there, or a block on the lines below. */
  private value(rest: string, indent: number, atKey: boolean): unknown {
    if (rest === "" || rest.startsWith("#")) {
      const next = this.content();
      if (next !== undefined && next.indent > indent) return this.block(next.indent);
      if (next !== undefined && atKey && next.indent === indent && SEQUENCE_ITEM.test(next.text)) {
        if (++this.depth > MAX_DEPTH) throw DECLINE;
        const sequence = this.sequence(indent, true);
        this.depth--;
        return sequence;
      }
      return null;
    }
    const value = scalar(rest);
    // A deeper line after a scalar would continue it (a multi-line scalar) or be an error.
    const next = this.lines[this.position];
    if (next !== undefined && next.indent > indent) throw DECLINE;
    return value;
  }
}

/** A scalar written on one line (the text after `key: ` or `- `, comment included). */
function scalar(text: string): unknown {
  const first = text[0] ?? "";
  if (first === "'") return single(text);
  if (first === '"') return double(text);
  if (text.startsWith("[]") && TAIL.test(text.slice(2))) return [];
  if (text.startsWith("{}") && TAIL.test(text.slice(2))) return {};
  return plain(text);
}

function single(text: string): string {
  let value = "";
  let from = 1;
  for (;;) {
    const quote = text.indexOf("'", from);
    if (quote < 0) throw DECLINE;
    value += text.slice(from, quote);
    if (text[quote + 1] === "'") {
      value += "'";
      from = quote + 2;
      continue;
    }
    if (!TAIL.test(text.slice(quote + 1))) throw DECLINE;
    return value;
  }
}

function double(text: string): string {
  let value = "";
  let index = 1;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === '"') {
      if (!TAIL.test(text.slice(index + 1))) throw DECLINE;
      return value;
    }
    if (char !== "\\") {
      value += char;
      index++;
      continue;
    }
    const escaped = text[index + 1] ?? "";
    const simple = ESCAPES[escaped];
    if (simple !== undefined) {
      value += simple;
      index += 2;
      continue;
    }
    const length = HEX_LENGTH[escaped];
    if (length === undefined) throw DECLINE;
    const hex = text.slice(index + 2, index + 2 + length);
    if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== length) throw DECLINE;
    const code = Number.parseInt(hex, 16);
    if (code > 0x10ffff) throw DECLINE;
    // As js-yaml does: a \u escape of half a surrogate pair is that half.
    value += code <= 0xffff ? String.fromCharCode(code) : String.fromCodePoint(code);
    index += 2 + length;
  }
  // No closing quote on this line: a multi-line scalar.
  throw DECLINE;
}

function plain(text: string): string {
  const first = text[0] ?? "";
  if (INDICATORS.has(first)) {
    const next = text[1];
    if (!(first === "-" || first === "?" || first === ":") || next === undefined || next === " ") throw DECLINE;
  }
  const comment = text.indexOf(" #");
  const value = (comment < 0 ? text : text.slice(0, comment)).replace(/ +$/, "");
  if (value.includes(": ") || value.endsWith(":")) throw DECLINE;
  if (value.startsWith("---") || value.startsWith("...")) throw DECLINE;
  if (NOT_STRINGS.has(value)) throw DECLINE;
  // Core-schema numbers start with a digit, a sign or a dot: most values cannot be one, and
  // then the two patterns are not compiled.
  if (NUMBER_START.has(value.charCodeAt(0)) && (CORE_INT.test(value) || CORE_FLOAT.test(value))) throw DECLINE;
  return value;
}
