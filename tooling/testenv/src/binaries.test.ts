import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import { resolveBinDir } from "./binaries.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir("testenv-binaries-");
  cleanups.push(dir.cleanup);
  return dir.path;
}

async function fakeBinaries(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of ["kube-apiserver", "etcd"]) {
    await writeFile(join(dir, name), "#!/bin/sh\n");
    await chmod(join(dir, name), 0o755);
  }
}

describe("resolveBinDir", () => {
  test("takes the last stdout line of ensure.sh and forwards its progress", async () => {
    // Given an ensure script that logs progress and prints a bin dir
    const root = await scratch();
    await fakeBinaries(join(root, "bin"));
    const script = join(root, "ensure.sh");
    await writeFile(script, `echo "building…" >&2\necho noise\necho "${join(root, "bin")}"\n`);
    const lines: string[] = [];

    // When resolved
    const binDir = await resolveBinDir({ script, log: (line) => lines.push(line) });

    // Then
    expect(binDir).toBe(join(root, "bin"));
    expect(lines).toEqual(["building…"]);
  });

  test("fails with what to do when ensure.sh cannot provide the binaries", async () => {
    const root = await scratch();
    const script = join(root, "ensure.sh");
    await writeFile(script, 'echo "k8s-testbin: error: go not found" >&2\nexit 1\n');

    const failure = resolveBinDir({ script });

    await expect(failure).rejects.toThrow(/not available/);
    await expect(failure).rejects.toThrow(/go not found/);
    await expect(failure).rejects.toThrow(/KUBEBUILDER_ASSETS/);
    await expect(failure).rejects.toThrow(/install Go/);
  });

  test("checks an explicit binDir instead of running ensure.sh", async () => {
    const root = await scratch();
    await expect(resolveBinDir({ binDir: root })).rejects.toThrow(/has no executable kube-apiserver or etcd/);
    await fakeBinaries(root);
    await expect(resolveBinDir({ binDir: root })).resolves.toBe(root);
  });
});
