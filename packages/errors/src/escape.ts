// Text that did not come from us (a controller's message, a CSV header cell, a field name,
// a file name) may hold terminal control sequences: ESC [ … rewrites the screen, OSC 52
// writes the clipboard, a bidirectional override reorders what the eye reads. Everything
// printed for people passes through escapeControl once, where it is printed.

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional formatting characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_AND_LAYOUT = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// What JSON.stringify leaves as it is: DEL, C1 and the bidirectional characters (it escapes C0 itself).
const JSON_UNESCAPED = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const visible = (char: string): string => {
  const code = char.charCodeAt(0);
  if (char === "\n") return "\\n";
  if (char === "\t") return "\\t";
  if (char === "\r") return "\\r";
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
};

export interface EscapeOptions {
  /**
   * Keep newlines and tabs (a multi-line message). Default false: they are shown as `\n`
   * and `\t`, for text that must stay on one line (a table cell, a field name).
   */
  multiline?: boolean;
}

/** The text with every terminal control character shown as an escape (`\x1b`, `\u202e`) instead. */
export function escapeControl(text: string, options: EscapeOptions = {}): string {
  const pattern = options.multiline ? CONTROL : CONTROL_AND_LAYOUT;
  pattern.lastIndex = 0;
  return pattern.test(text) ? text.replace(pattern, visible) : text;
}

/**
 * JSON text (from JSON.stringify) with DEL, C1 and bidirectional characters written as
 * `\u` escapes too: the same JSON value, safe to show on a terminal.
 */
export function escapeJsonControl(json: string): string {
  JSON_UNESCAPED.lastIndex = 0;
  return JSON_UNESCAPED.test(json)
    ? json.replace(JSON_UNESCAPED, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : json;
}
