import { open } from "node:fs/promises";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The marker a test file puts in a comment near its top to be started before the others. */
const RUNS_LONG = "@runs-long";

/** Whether the file's first bytes hold the marker. */
async function marked(path: string): Promise<boolean> {
  const file = await open(path, "r").catch(() => undefined);
  if (file === undefined) return false;
  try {
    const { buffer, bytesRead } = await file.read({ buffer: Buffer.alloc(2048), position: 0 });
    return buffer.subarray(0, bytesRead).toString("utf8").includes(RUNS_LONG);
  } finally {
    await file.close();
  }
}

/**
 * Vitest's order (its cache of last durations, else the larger file first), except that files
 * marked `@runs-long` start first. With no cache (a fresh clone, as CI runs) vitest guesses a
 * file's time from its size, and a short file that runs for minutes (the doc-tested guides: one
 * test per guide, a sandbox each) would start last and run alone at the end. Longest first is
 * what keeps both workers busy to the end.
 */
export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const long = new Set(
      (await Promise.all(sorted.map(async (spec) => ((await marked(spec.moduleId)) ? spec : undefined)))).filter(
        (spec) => spec !== undefined,
      ),
    );
    return [...sorted.filter((spec) => long.has(spec)), ...sorted.filter((spec) => !long.has(spec))];
  }
}
