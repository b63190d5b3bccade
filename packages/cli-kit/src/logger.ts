import { styleText } from "node:util";
import { escapeControl, escapeJsonControl } from "@nodekit/errors";
import type { Redactor } from "@nodekit/process";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

/**
 * `fields` are structured data (shown as key=value under -v in text, as JSON keys with
 * --json-logs); `details` are extra lines for people, printed under the message in text
 * mode only (JSON consumers get the same facts from `fields`).
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields, details?: readonly string[]): void;
  warn(message: string, fields?: LogFields, details?: readonly string[]): void;
  error(message: string, fields?: LogFields, details?: readonly string[]): void;
  readonly verbose: boolean;
}

export interface LoggerOptions {
  /** Show debug lines (`-v`). */
  verbose?: boolean;
  /** One JSON object a line (`--json-logs`), for log shippers. */
  json?: boolean;
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  redactor?: Redactor;
  now?: () => Date;
  env?: NodeJS.ProcessEnv;
}

const PREFIX: Record<LogLevel, string> = { debug: "debug: ", info: "", warn: "warning: ", error: "error: " };
const STYLE: Record<LogLevel, Parameters<typeof styleText>[0] | undefined> = {
  debug: "dim",
  info: undefined,
  warn: "yellow",
  error: "red",
};

/**
 * The only way the CLIs write logs. Everything goes to stderr (stdout is for results),
 * through the redactor, as text or NDJSON. Colour only on a TTY and never with NO_COLOR.
 * Messages often carry what others wrote (a controller's message, a file's field names):
 * terminal control characters in them are escaped, in text and in JSON.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const stream = options.stream ?? process.stderr;
  const env = options.env ?? process.env;
  const now = options.now ?? (() => new Date());
  const verbose = options.verbose ?? false;
  const color = Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== "dumb";
  const redact = (text: string) => (options.redactor ? options.redactor.redact(text) : text);

  const write = (level: LogLevel, message: string, fields?: LogFields, details?: readonly string[]) => {
    if (level === "debug" && !verbose) return;
    if (options.json) {
      const record = { time: now().toISOString(), level, msg: message, ...fields };
      stream.write(`${escapeJsonControl(redact(JSON.stringify(record)))}\n`);
      return;
    }
    let text = `${PREFIX[level]}${message}`;
    if (fields && Object.keys(fields).length > 0 && verbose) {
      text += ` ${Object.entries(fields)
        .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
        .join(" ")}`;
    }
    text = escapeControl(redact(text), { multiline: true });
    const style = STYLE[level];
    let out = `${color && style ? styleText(style, text, { validateStream: false }) : text}\n`;
    for (const line of details ?? []) out += `${escapeControl(redact(line), { multiline: true })}\n`;
    stream.write(out);
  };

  return {
    verbose,
    debug: (message, fields) => write("debug", message, fields),
    info: (message, fields, details) => write("info", message, fields, details),
    warn: (message, fields, details) => write("warn", message, fields, details),
    error: (message, fields, details) => write("error", message, fields, details),
  };
}
