import { readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "@nodekit/test-utils";
import { expect, onTestFinished, test } from "vitest";
import { startControlPlane } from "./control-plane.ts";
import { clientsFor } from "./kube.ts";
import { useControlPlane } from "./vitest.ts";

// A control plane starts etcd from a cached copy of the data kube-apiserver's first start left
// (control-plane.ts, etcdSeed()): one copy per command line, so a plane serving k3s's Service
// range does not inherit the `kubernetes` Service of the default one.

/** Bytes a directory's files take on disk (etcd's write-ahead log is 64 MB long, nearly all holes). */
async function diskUsage(dir: string): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).blocks * 512;
  }
  return bytes;
}

test("planes start from the cached etcd data of their own Service range, and are as a first start leaves them", async () => {
  const { binDir } = await useControlPlane();
  // Given planes with the default Service range and with k3s's
  const planes = await Promise.all([
    startControlPlane({ binDir }),
    startControlPlane({ binDir, serviceClusterIpRange: "10.43.0.0/16" }),
  ]);
  try {
    const [usual, k3sRange] = planes.map((plane) => plane.etcdSeed);
    // Then each started from a seed of its own, a complete one, small on disk
    expect(usual).toBeDefined();
    expect(k3sRange).toBeDefined();
    expect(usual).not.toBe(k3sRange);
    for (const seed of [usual, k3sRange] as string[]) {
      await expect(stat(join(seed, "..", ".complete"))).resolves.toBeDefined();
      expect(await diskUsage(seed)).toBeLessThan(5 * 1024 * 1024);
    }
    for (const [plane, clusterIp] of [
      [planes[0], "10.0.0.1"],
      [planes[1], "10.43.0.1"],
    ] as const) {
      const api = clientsFor(plane.adminKubeconfigPath);
      // and serves the `kubernetes` Service in its own range, the bootstrap's roles, and what is written to it
      expect((await api.core.readNamespacedService({ name: "kubernetes", namespace: "default" })).spec?.clusterIP).toBe(
        clusterIp,
      );
      expect((await api.rbac.readClusterRole({ name: "cluster-admin" })).rules?.length).toBeGreaterThan(0);
      await api.core.createNamespace({ body: { metadata: { name: "seeded-write" } } });
      expect((await api.core.readNamespace({ name: "seeded-write" })).status?.phase).toBe("Active");
    }
    // and no plane's writes reach the seed: the next plane from it has no such namespace
    const next = await startControlPlane({ binDir });
    planes.push(next);
    expect(next.etcdSeed).toBe(usual);
    const status = await clientsFor(next.adminKubeconfigPath)
      .core.readNamespace({ name: "seeded-write" })
      .then(
        () => 200,
        (error: { code?: number }) => error.code,
      );
    expect(status).toBe(404);
  } finally {
    await Promise.all(planes.map((plane) => plane.stop()));
  }
}, 180_000);

test("a cache it cannot write to is no reason to fail: the plane starts from empty data", async () => {
  const { binDir } = await useControlPlane();
  const dir = await tempDir("etcd-seed-unwritable-");
  onTestFinished(dir.cleanup);
  // (a cache path under a file: no one can make it, root included)
  const file = join(dir.path, "a-file");
  await writeFile(file, "");
  const lines: string[] = [];
  const plane = await startControlPlane({
    binDir,
    env: { ...process.env, NODEKIT_CACHE: join(file, "cache") },
    log: (line) => lines.push(line),
  });
  try {
    expect(plane.etcdSeed).toBeUndefined();
    expect(lines.join("\n")).toMatch(/etcd seed: not kept \(ENOTDIR.*\); starting from empty data/);
    const api = clientsFor(plane.adminKubeconfigPath);
    expect((await api.rbac.readClusterRole({ name: "cluster-admin" })).metadata?.name).toBe("cluster-admin");
  } finally {
    await plane.stop();
  }
}, 120_000);
