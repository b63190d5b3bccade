import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { LongFirstSequencer } from "./tooling/testenv/src/sequencer.ts";

// One project per package: `vitest --project sitespec` runs one package's tests.
// Sibling packages resolve from source through the "source" export condition, so no
// build is needed before the unit tests. CLI tests (apps/*/test) run the built CLIs.
const packageDirs = ["packages", "apps", "tooling"].flatMap((group) =>
  readdirSync(group, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(group, entry.name, "package.json")))
    .map((entry) => join(group, entry.name)),
);

export default defineConfig({
  // Tests run in Vite's SSR environment, which takes its own resolve conditions.
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"], externalConditions: ["source"] } },
  test: {
    // Four test files at once. Vitest's default in a run is one worker fewer than the cores,
    // which on the 2-core machines CI runs on is one: every file ran alone, though most of an
    // integration file's time is spent waiting on the servers and CLIs it starts. With three,
    // the cores still stood idle 12 % of the suite's second half (a /proc/stat sample every 5 s).
    maxWorkers: 4,
    // Files marked @runs-long start first (see the sequencer).
    sequence: { sequencer: LongFirstSequencer },
    projects: [
      ...packageDirs.map((dir) => ({
        extends: true,
        test: {
          name: dir.split("/")[1],
          root: dir,
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**"],
          testTimeout: 30_000,
          // A library's tests share one module graph per worker (no fresh graph per file): they
          // hold no process-wide state. The apps' and tooling's tests (CLIs run in-process,
          // servers, environment) keep a graph of their own per file.
          isolate: !dir.startsWith("packages/"),
        },
      })),
      // Integration tests (*.int.test.ts, any package) against one real kube-apiserver + etcd per
      // run, started by the global setup (tooling/testenv) and reached through inject("testenv").
      {
        extends: true,
        test: {
          name: "integration",
          include: ["{packages,apps,tooling}/*/{src,test}/**/*.int.test.ts"],
          exclude: ["**/node_modules/**"],
          globalSetup: ["tooling/testenv/src/global-setup.ts"],
          // Several files at once (maxWorkers above): a file that makes
          // cluster-scoped state has a control plane of its own (useControlPlane({ dedicated })),
          // the others keep to namespaces of their own on the shared one. Tests marked
          // concurrent (the doc-tested guides) run two at a time.
          maxConcurrency: 2,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
