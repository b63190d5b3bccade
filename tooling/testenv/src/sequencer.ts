import { open } from "node:fs/promises";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The marker a test file puts in a comment near its top to be started before the others, with
 * how long it runs, in seconds, on the 2-core machines: `@runs-long 560 s`.
 */
const RUNS_LONG = /@runs-long(?:\s+(\d+)\s*s\b)?/;

/** The file's marker, from its first bytes: its estimate in ms (0 when it gives none), or undefined when unmarked. */
async function marked(path: string): Promise<number | undefined> {
  const file = await open(path, "r").catch(() => undefined);
  if (file === undefined) return undefined;
  try {
    const { buffer, bytesRead } = await file.read({ buffer: Buffer.alloc(2048), position: 0 });
    const match = RUNS_LONG.exec(buffer.subarray(0, bytesRead).toString("utf8"));
    return match === null ? undefined : Number(match[1] ?? 0) * 1000;
  } finally {
    await file.close();
  }
}

/**
 * Vitest's order (its cache of last durations, else the larger file first), except that files
 * marked `@runs-long` start first, the longest first: by the duration vitest's cache has for
 * it, else by the marker's estimate. With no cache (a fresh clone, as CI runs) vitest guesses a
 * file's time from its size, and a short file that runs for minutes (the doc-tested guides: one
 * test per guide, a sandbox each) would start last and run alone at the end; among the marked
 * files it would start after larger ones that take half its time. Longest first is what keeps
 * the workers busy to the end.
 */
export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const estimates = await Promise.all(sorted.map((spec) => marked(spec.moduleId)));
    const long = sorted
      .map((spec, i) => ({ spec, i, ms: this.ctx.cache.getTestSpecificationResult(spec)?.duration ?? estimates[i] }))
      .filter((entry): entry is { spec: TestSpecification; i: number; ms: number } => estimates[entry.i] !== undefined)
      // Longest first; vitest's order among equals.
      .sort((a, b) => b.ms - a.ms || a.i - b.i)
      .map((entry) => entry.spec);
    const rest = sorted.filter((_, i) => estimates[i] === undefined);
    return [...long, ...rest];
  }
}
