// @runs-long 560 s (a fresh sandbox for each guide): started before the other files, see tooling/testenv/src/sequencer.ts.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { formatProblem } from "@nodekit/errors";
import { goRuntimeEnv, repoRoot } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { beforeAll, expect, test } from "vitest";
import { extractBlocks } from "./blocks.ts";
import { GUIDES } from "./guides.ts";
import { runDocTests } from "./run.ts";

// Every runnable shell block of the guides, run in order as a reader would, each guide in
// a HOME and sandbox of its own (the guide's own `./run sandbox up` brings it up fresh).
// A guide that drifts from the CLI fails here. NODEKIT_DOCTEST_DEBUG=1 shows the output.

const runnable = GUIDES.filter((path) =>
  extractBlocks(readFileSync(join(repoRoot, path), "utf8"), { source: path }).blocks.some((b) => b.kind === "run"),
);

// The sandbox's release carries nvkectl's executables (pnpm package): built here once, with the
// machine's HOME (pnpm's store), into the machine's cache, where each guide's sandbox finds them.
beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(repoRoot, "tooling/packaging/src/sea.ts"), "--cached"], {
    cwd: repoRoot,
  });
}, 900_000);

test("some guides have runnable blocks", () => {
  expect(runnable).toEqual(expect.arrayContaining(["docs/auth.md", "docs/end-to-end.md", "docs/first-cluster.md"]));
});

// Each guide has a world of its own (HOME, checkout, sandbox: see runDocTests), so two run at
// once (the integration project's maxConcurrency): a guide spends much of its time waiting on
// the sandbox's controllers, and one guide alone leaves a core idle.
test.concurrent.each(runnable)(
  "%s: its runnable blocks pass against a fresh sandbox",
  { timeout: 600_000 },
  async (path) => {
    const binDir = (await useControlPlane()).binDir;
    const result = await runDocTests(path, readFileSync(join(repoRoot, path), "utf8"), {
      root: repoRoot,
      env: {
        PATH: process.env.PATH ?? "",
        ...(process.env.HOME === undefined ? {} : { HOME: process.env.HOME }),
        // The test run's settings for Go programs (tooling/testenv/src/isolate.ts).
        ...goRuntimeEnv(),
        NODEKIT_TESTENV_BIN_DIR: binDir,
        // The runner's registries too: the guide's sandbox then runs no ensure.sh of its own.
        ...(process.env.NODEKIT_REGISTRY_BIN_DIR
          ? { NODEKIT_REGISTRY_BIN_DIR: process.env.NODEKIT_REGISTRY_BIN_DIR }
          : {}),
        // Flux's CRDs (tooling/flux-testbin), which docs/gitops.md validates its tree against.
        ...(process.env.NODEKIT_FLUX_BIN_DIR ? { NODEKIT_FLUX_BIN_DIR: process.env.NODEKIT_FLUX_BIN_DIR } : {}),
        // Argo CD's CRDs (tooling/argocd-crds), which docs/gitops.md validates its Applications against.
        ...(process.env.NODEKIT_ARGOCD_CRDS_DIR
          ? { NODEKIT_ARGOCD_CRDS_DIR: process.env.NODEKIT_ARGOCD_CRDS_DIR }
          : {}),
        // The controller quicker than its default, as a test wants it; the guides' outputs do not depend on it.
        NODEKIT_SANDBOX_TIMING: "provision-ms=500,delete-ms=300,node-ms=200",
      },
      ...(process.env.NODEKIT_DOCTEST_DEBUG ? { onOutput: (chunk: string) => process.stderr.write(chunk) } : {}),
    });
    expect(result.problems.map(formatProblem)).toEqual([]);
    expect(result.ran).toBeGreaterThan(0);
  },
);
