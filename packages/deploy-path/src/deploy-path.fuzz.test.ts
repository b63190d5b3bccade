import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { formatProblem, type Problem } from "@nodekit/errors";
import { FUZZ_RUNS, fuzzText, problemsAreLocated, repoRoot } from "@nodekit/test-utils";
import fc from "fast-check";
import { expect, test } from "vitest";
import { loadDeployPath } from "./index.ts";
import { memoryFs } from "./test-support.ts";

// Issue 9, "done when": 10,000 generated deploy paths through the reader — the shipped
// deploy/nico with one of its files (the index, a chart pin, values, an overlay, a manifest)
// mutated — with no crash, no hang, and every problem located in the file it names.

const ROOT = "/p";

async function shipped(): Promise<Record<string, string>> {
  const dir = join(repoRoot, "deploy/nico");
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[join(ROOT, relative(dir, path))] = await readFile(path, "utf8");
  }
  return files;
}

const TOKENS = [
  "items:",
  "- name: ",
  "path: ",
  "dependsOn: [",
  "timeout: ",
  "stackValues: true",
  "clusterAPI:",
  "version: ",
  "chart: ",
  "repository: ",
  "kind: ",
  "apiVersion: ",
  "metadata:",
  "namespace: ",
  "../",
  "/etc/passwd",
];

test(`the deploy path reader takes ${FUZZ_RUNS} generated deploy paths without a crash, each problem located`, async () => {
  const files = await shipped();
  const names = Object.keys(files).sort();
  expect(names).toContain(join(ROOT, "nvke-deploy.yaml"));
  expect((await loadDeployPath(ROOT, { fs: memoryFs(files) })).problems).toEqual([]);
  let runs = 0;
  let failedToLoad = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...names).chain((name) => fc.tuple(fc.constant(name), fuzzText([files[name] ?? ""], TOKENS))),
      async ([name, text]) => {
        runs += 1;
        const mutated = { ...files, [name]: text };
        const loaded = await loadDeployPath(ROOT, { fs: memoryFs(mutated) });
        expect(loaded.deployPath === undefined).toBe(loaded.problems.length > 0);
        if (loaded.deployPath === undefined) failedToLoad += 1;
        const bySource = new Map<string, Problem[]>();
        for (const problem of loaded.problems) {
          bySource.set(problem.source, [...(bySource.get(problem.source) ?? []), problem]);
        }
        for (const [source, problems] of bySource) {
          expect(problemsAreLocated(problems, source, mutated[source] ?? "", formatProblem)).toBe(true);
        }
      },
    ),
    { numRuns: FUZZ_RUNS },
  );
  expect(runs).toBe(FUZZ_RUNS);
  // Most mutations break something, and the reader says so (the test is not vacuous).
  expect(failedToLoad).toBeGreaterThan(FUZZ_RUNS / 4);
}, 300_000);
