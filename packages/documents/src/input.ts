import { open } from "node:fs/promises";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";

/**
 * The most an input file or standard input is read, by default: 8 MiB, as many bytes as
 * `readYamlDocuments` takes characters. A hosts CSV of 100,000 hosts is under 4 MiB.
 */
export const DEFAULT_MAX_INPUT_BYTES = 8 * 1024 * 1024;

const CHUNK = 64 * 1024;

export interface ReadInputOptions {
  /** How the error names the input: the path as the user gave it, or "stdin". Default: the path. */
  source?: string;
  /** The input in words, to start the error's message: "the hosts CSV" gives `the hosts CSV hosts.csv is larger…`. */
  what?: string;
  /** The most bytes read; an input with more is INPUT_TOO_LARGE. Default {@link DEFAULT_MAX_INPUT_BYTES}. */
  maxBytes?: number;
}

const mib = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes.toLocaleString("en-US")} bytes`;

/** INPUT_TOO_LARGE, naming the input and the limit. */
export function inputTooLarge(source: string, maxBytes: number, what?: string): UserError {
  const subject = what === undefined ? source : `${what} ${source}`;
  return new UserError(errorCodes.INPUT_TOO_LARGE, `${subject} is larger than ${mib(maxBytes)}`, {
    why: `at most ${mib(maxBytes)} of an input is read (it is held in memory whole); reading stopped there and nothing was changed`,
    next: `check that ${source} is the input you meant: a device or a pipe that never ends is no document`,
    facts: { file: source, maxBytes },
  });
}

/**
 * A file's bytes, read whole but never past `maxBytes`: a regular file larger than that
 * is refused before anything is read, and anything else (/dev/zero, a FIFO, a file that
 * grows) is read until it ends or one byte past the limit, never more. Throws
 * INPUT_TOO_LARGE over the limit, and the file system's own error (ENOENT, EACCES,
 * EISDIR, …) for the caller to word.
 */
export async function readInputFile(path: string, options: ReadInputOptions = {}): Promise<Buffer> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_INPUT_BYTES;
  const source = options.source ?? path;
  const file = await open(path, "r");
  try {
    const info = await file.stat();
    if (info.isFile() && info.size > maxBytes) throw inputTooLarge(source, maxBytes, options.what);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total));
      const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) throw inputTooLarge(source, maxBytes, options.what);
      chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await file.close();
  }
}

/**
 * A stream's bytes (standard input for `-f -`), read until it ends or one chunk past
 * `maxBytes`: then the stream is destroyed and INPUT_TOO_LARGE thrown. `source` defaults
 * to "stdin".
 */
export async function readInputStream(
  stream: NodeJS.ReadableStream | AsyncIterable<Uint8Array | string>,
  options: ReadInputOptions = {},
): Promise<Buffer> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_INPUT_BYTES;
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const piece of stream as AsyncIterable<Uint8Array | string>) {
    const chunk =
      typeof piece === "string" ? Buffer.from(piece) : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    total += chunk.length;
    if (total > maxBytes) {
      (stream as { destroy?: () => void }).destroy?.();
      throw inputTooLarge(options.source ?? "stdin", maxBytes, options.what);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}
