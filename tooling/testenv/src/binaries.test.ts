import { type FileTree, testdir } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { binaries } from "./binaries.ts";

const executable = { content: "#!/bin/sh\n", mode: 0o755 };
const fakeBinaries = (dir: string, names = ["kube-apiserver", "etcd"]): FileTree =>
  Object.fromEntries(names.map((name) => [`${dir}/${name}`, executable]));

describe("binaries", () => {
  test("takes the last stdout line of ensure.sh and forwards its progress", async () => {
    // Given an ensure script that logs progress and prints a bin dir
    const root = await testdir(fakeBinaries("bin"), { prefix: "testenv-binaries-" });
    await root.write({ "ensure.sh": `echo "building…" >&2\necho noise\necho "${root.path("bin")}"\n` });
    const lines: string[] = [];

    // When resolved
    const binDir = await binaries("kubernetes", {
      env: {},
      script: root.path("ensure.sh"),
      log: (line) => lines.push(line),
    });

    // Then
    expect(binDir).toBe(root.path("bin"));
    expect(lines).toEqual(["building…"]);
  });

  test("fails with what to do when ensure.sh cannot provide the binaries", async () => {
    const root = await testdir({ "ensure.sh": 'echo "k8s-testbin: error: go not found" >&2\nexit 1\n' });

    const failure = binaries("kubernetes", { env: {}, script: root.path("ensure.sh") });

    await expect(failure).rejects.toThrow(/not available/);
    await expect(failure).rejects.toThrow(/go not found/);
    await expect(failure).rejects.toThrow(/KUBEBUILDER_ASSETS/);
    await expect(failure).rejects.toThrow(/install Go/);
  });

  test("checks an explicit binDir instead of running ensure.sh", async () => {
    const root = await testdir();
    await expect(binaries("kubernetes", { binDir: root.path() })).rejects.toThrow(
      /has no executable kube-apiserver or etcd/,
    );
    await root.write(fakeBinaries("."));
    await expect(binaries("kubernetes", { binDir: root.path() })).resolves.toBe(root.path());
  });

  test("takes the directory the test runner hands on in its variable, checked, and runs no ensure.sh", async () => {
    // Given the runner's variables, and an ensure.sh that would fail
    const root = await testdir({
      ...fakeBinaries("k8s"),
      ...fakeBinaries("registries", ["registry", "ggcr-registry"]),
      "ensure.sh": "exit 1\n",
    });
    const env = { NODEKIT_TESTENV_BIN_DIR: root.path("k8s"), NODEKIT_REGISTRY_BIN_DIR: root.path("registries") };

    // Then each set is the runner's directory
    const script = root.path("ensure.sh");
    await expect(binaries("kubernetes", { env, script })).resolves.toBe(root.path("k8s"));
    await expect(binaries("registry", { env, script })).resolves.toBe(root.path("registries"));
    // …and a directory without the programs is named with its variable
    await expect(binaries("registry", { env: { NODEKIT_REGISTRY_BIN_DIR: root.path("k8s") } })).rejects.toThrow(
      `NODEKIT_REGISTRY_BIN_DIR=${root.path("k8s")} has no executable registry or ggcr-registry`,
    );
  });
});
