import { type FileTree, testdir } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { resolveBinDir } from "./binaries.ts";

const executable = { content: "#!/bin/sh\n", mode: 0o755 };
const fakeBinaries = (dir: string): FileTree => ({
  [`${dir}/kube-apiserver`]: executable,
  [`${dir}/etcd`]: executable,
});

describe("resolveBinDir", () => {
  test("takes the last stdout line of ensure.sh and forwards its progress", async () => {
    // Given an ensure script that logs progress and prints a bin dir
    const root = await testdir(fakeBinaries("bin"), { prefix: "testenv-binaries-" });
    await root.write({ "ensure.sh": `echo "building…" >&2\necho noise\necho "${root.path("bin")}"\n` });
    const lines: string[] = [];

    // When resolved
    const binDir = await resolveBinDir({ script: root.path("ensure.sh"), log: (line) => lines.push(line) });

    // Then
    expect(binDir).toBe(root.path("bin"));
    expect(lines).toEqual(["building…"]);
  });

  test("fails with what to do when ensure.sh cannot provide the binaries", async () => {
    const root = await testdir({ "ensure.sh": 'echo "k8s-testbin: error: go not found" >&2\nexit 1\n' });

    const failure = resolveBinDir({ script: root.path("ensure.sh") });

    await expect(failure).rejects.toThrow(/not available/);
    await expect(failure).rejects.toThrow(/go not found/);
    await expect(failure).rejects.toThrow(/KUBEBUILDER_ASSETS/);
    await expect(failure).rejects.toThrow(/install Go/);
  });

  test("checks an explicit binDir instead of running ensure.sh", async () => {
    const root = await testdir();
    await expect(resolveBinDir({ binDir: root.path() })).rejects.toThrow(/has no executable kube-apiserver or etcd/);
    await root.write(fakeBinaries("."));
    await expect(resolveBinDir({ binDir: root.path() })).resolves.toBe(root.path());
  });
});
