import { isUtf8 } from "node:buffer";
import type { Problem } from "@nodekit/errors";

export interface DecodeOptions {
  /** How problems name the input: the file path as the user gave it. */
  source: string;
}

export type Decoded = { text: string; problems: [] } | { text?: undefined; problems: Problem[] };

const BOMS: ReadonlyArray<[bytes: number[], name: string]> = [
  [[0x00, 0x00, 0xfe, 0xff], "UTF-32"],
  [[0xff, 0xfe, 0x00, 0x00], "UTF-32"],
  [[0xfe, 0xff], "UTF-16"],
  [[0xff, 0xfe], "UTF-16"],
];

/**
 * A file's bytes as text, when they are UTF-8 (a UTF-8 byte-order mark is dropped). Anything
 * else is one problem, located at the first byte that is not UTF-8 (its line and column, in
 * bytes), or naming the UTF-16/32 encoding a byte-order mark shows, rather than text full of
 * replacement characters that then fails to parse for no visible reason.
 */
export function decodeUtf8(bytes: Uint8Array, options: DecodeOptions): Decoded {
  const { source } = options;
  for (const [bom, name] of BOMS) {
    if (bom.every((byte, index) => bytes[index] === byte)) {
      return {
        problems: [
          {
            severity: "error",
            source,
            message: `is ${name} text, not UTF-8; save it as UTF-8 (without a byte-order mark)`,
          },
        ],
      };
    }
  }
  if (isUtf8(bytes)) {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    return { text: text.startsWith("\uFEFF") ? text.slice(1) : text, problems: [] };
  }
  const offset = firstInvalidByte(bytes);
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < offset; index++) {
    if (bytes[index] === 0x0a) {
      line += 1;
      lineStart = index + 1;
    }
  }
  const byte = (bytes[offset] ?? 0).toString(16).padStart(2, "0");
  return {
    problems: [
      {
        severity: "error",
        source,
        line,
        column: offset - lineStart + 1,
        message: `is not UTF-8 text (byte 0x${byte} is not part of a UTF-8 character); save the file as UTF-8`,
      },
    ],
  };
}

/** The offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629). */
function firstInvalidByte(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] ?? 0;
    let length: number;
    let min: number;
    if (lead < 0x80) {
      index += 1;
      continue;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      min = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      min = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      min = 0x10000;
    } else {
      return index;
    }
    let code = lead & (0xff >> (length + 1));
    for (let k = 1; k < length; k++) {
      const next = bytes[index + k];
      if (next === undefined || (next & 0xc0) !== 0x80) return index;
      code = (code << 6) | (next & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return index;
    index += length;
  }
  return bytes.length;
}
