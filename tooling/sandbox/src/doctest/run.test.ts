import { execFileSync } from "node:child_process";
import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatProblem } from "@nodekit/errors";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runDocTests } from "./run.ts";

// A checkout whose node_modules was installed from another lockfile: a guide's `./run sandbox
// up` would install again, from a registry a test run cannot reach (it hangs, and can leave
// node_modules empty). The doc-test says so before it runs anything.

const GUIDE = "# A guide\n\n```sh doctest\ntrue\n```\n";
let root: { path: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  root = await tempDir("doctest-deps-");
  await mkdir(join(root.path, "tooling", "toolchain"), { recursive: true });
  await cp(join(repoRoot, "tooling", "toolchain", "env.sh"), join(root.path, "tooling", "toolchain", "env.sh"));
  await writeFile(join(root.path, "package.json"), '{ "packageManager": "pnpm@12.4.2" }\n');
  await writeFile(join(root.path, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n");
  await mkdir(join(root.path, "node_modules"));
});
afterAll(() => root.cleanup());

/** Writes the stamp `./run` writes after an install from the lockfile and package.json files as they are. */
function stampAsInstalled(): void {
  const env = { PATH: process.env.PATH ?? "", HOME: root.path, NODEKIT_ROOT: root.path };
  const want = execFileSync("bash", ["-c", '. "$NODEKIT_ROOT/tooling/toolchain/env.sh" && nodekit_deps_want'], { env });
  execFileSync(
    "bash",
    ["-c", 'printf %s "$1" > "$NODEKIT_ROOT/node_modules/.nodekit-install-stamp"', "-", String(want).trimEnd()],
    { env },
  );
}

const run = () =>
  runDocTests("guide.md", GUIDE, { root: root.path, env: { PATH: process.env.PATH ?? "", HOME: root.path } });

describe("a guide's run, when node_modules was not installed from this lockfile", () => {
  test("stops before its first block and says to run ./run setup", async () => {
    await writeFile(join(root.path, "node_modules", ".nodekit-install-stamp"), "installed from another lockfile\n");
    const result = await run();
    expect(result.ran).toBe(0);
    expect(result.problems.map(formatProblem).join("\n")).toMatch(
      /was not installed from this checkout's lockfile.*run \.\/run setup/,
    );
  });

  test("the same stamp written as ./run writes it after an install is current: nothing is said", () => {
    stampAsInstalled();
    const env = { PATH: process.env.PATH ?? "", HOME: root.path, NODEKIT_ROOT: root.path };
    expect(() =>
      execFileSync("bash", ["-c", '. "$NODEKIT_ROOT/tooling/toolchain/env.sh" && nodekit_deps_current'], { env }),
    ).not.toThrow();
  });
});

describe("./run's Node.js check (tooling/toolchain/env.sh's nodekit_node_ok)", () => {
  test("takes `node -v` at or above NODEKIT_NODE_MIN, field by field; refuses older, garbled or missing ones", async () => {
    // Given a `node` on PATH that prints whatever version it is told to
    const bin = join(root.path, "fake-node-bin");
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, "node"),
      '#!/bin/sh\n[ -n "$FAKE_NODE_VERSION" ] || exit 127\necho "$FAKE_NODE_VERSION"\n',
      {
        mode: 0o755,
      },
    );
    const ok = (version: string) => {
      try {
        execFileSync("bash", ["-c", '. "$NODEKIT_ROOT/tooling/toolchain/env.sh" && nodekit_node_ok'], {
          env: { PATH: `${bin}:/usr/bin:/bin`, HOME: root.path, NODEKIT_ROOT: root.path, FAKE_NODE_VERSION: version },
        });
        return true;
      } catch {
        return false;
      }
    };
    // Then (the minimum is 22.22.2, what @sigstore/* need)
    expect(["v22.22.2", "v22.23.0", "v22.100.0", "v23.0.0", "v24.1.0-nightly20261201abc"].filter(ok)).toEqual([
      "v22.22.2",
      "v22.23.0",
      "v22.100.0",
      "v23.0.0",
      "v24.1.0-nightly20261201abc",
    ]);
    expect(["v20.19.5", "v22.22.1", "v22.3.0", "v21.99.99", "vx.y.z", "", "garbled"].filter(ok)).toEqual([]);
  });
});
