import { Writable } from "node:stream";

/**
 * A stream to hand code that writes to stdout or stderr: `text()` is all it was given.
 * `isTTY` says whether it passes for a terminal (of 100 columns and 40 rows).
 */
export function sink(isTTY = false): { stream: Writable & { isTTY: boolean }; text: () => string } {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, callback) {
        chunks.push(String(chunk));
        callback();
      },
    }),
    { isTTY, columns: 100, rows: 40 },
  );
  return { stream, text: () => chunks.join("") };
}
