import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { CoreV1Api } from "@kubernetes/client-node";
import { type CreateClusterRequest, createNvkeClient } from "@nodekit/nvke-api";
import { eventually, portOpen, processAlive, tempDir } from "@nodekit/test-utils";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { load } from "js-yaml";
import { beforeAll, describe, expect, test } from "vitest";
import { startEmulator, testenvTenantApiServers } from "./index.ts";
import { authOff, FAST } from "./test-support.ts";

// Tenant API servers from the test tier, for real: kubectl reaches a tenant through the
// kubeconfig Secret, and no etcd or kube-apiserver outlives the cluster or the emulator.

const run = promisify(execFile);
const examples = join(import.meta.dirname, "../../../examples");
const example = async (name: string) => load(await readFile(join(examples, name), "utf8"));
const mainTs = join(import.meta.dirname, "main.ts");

let admin: string;
let binDir: string;
let core: CoreV1Api;

beforeAll(async () => {
  const plane = await useControlPlane();
  admin = plane.adminKubeconfigPath;
  binDir = plane.binDir;
  ({ core } = clientsFor(admin));
  await authOff(core);
});

async function kubeconfigSecret(namespace: string, cluster: string): Promise<string> {
  const secret = await core.readNamespacedSecret({ namespace, name: `${cluster}-kubeconfig` });
  return Buffer.from(secret.data?.value ?? "", "base64").toString("utf8");
}

/** The tenant's processes and data dir, from the pids file testenv keeps in it. */
async function tenantProcesses(dataDir: string): Promise<number[]> {
  const text = await readFile(join(dataDir, "pids"), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => Number(line.split(" ")[0]));
}

describe("tenant API servers (testenv)", () => {
  test("kubectl reaches the tenant with the kubeconfig Secret; the server goes with the cluster", async () => {
    // Given an emulator backing Ready clusters with real API servers
    const namespace = await useControlPlane().then((plane) => plane.createNamespace("nvke-clusters"));
    const dirs = await tempDir("nvke-tenants-");
    const emulator = await startEmulator({
      kubeconfigPath: admin,
      stateFile: join(dirs.path, "state.json"),
      timing: FAST,
      clustersNamespace: namespace,
      tenantApiServers: testenvTenantApiServers({ binDir, dataRoot: join(dirs.path, "tenants") }),
    });
    try {
      const client = createNvkeClient({ baseUrl: emulator.url });
      await client.createMachineImage((await example("machineimage.yaml")) as never);
      await client.createClusterRelease((await example("clusterrelease.yaml")) as never);
      const cluster = await client.createCluster((await example("capd-cluster.yaml")) as CreateClusterRequest);

      // When it is Ready
      const ready = await eventually(async () => {
        const current = await client.getCluster(cluster.id);
        expect(current.status.phase).toBe("Ready");
        return current;
      }, 60_000);

      // Then its kubeconfig Secret reaches a real API server, the one the cluster's endpoint names
      const [tenant] = emulator.tenants();
      expect(tenant?.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(ready.status.controlPlaneEndpoint).toBe(tenant?.server);
      const file = join(dirs.path, "capd-demo.kubeconfig");
      await writeFile(file, await kubeconfigSecret(namespace, "capd-demo"), { mode: 0o600 });
      const { stdout } = await run("kubectl", ["--kubeconfig", file, "get", "namespaces", "-o", "name"]);
      expect(stdout.split("\n")).toContain("namespace/default");
      const whoami = await run("kubectl", ["--kubeconfig", file, "auth", "can-i", "*", "*"]);
      expect(whoami.stdout.trim()).toBe("yes");

      // When the cluster is deleted and gone
      const pids = tenant?.pids ?? [];
      const dataDir = join(dirs.path, "tenants", `capd-demo-${cluster.id.slice(0, 8)}`);
      expect(existsSync(dataDir)).toBe(true);
      await client.deleteCluster(cluster.id);
      await eventually(async () => expect((await client.listClustersPage()).items).toEqual([]), 30_000);
      await emulator.reconcile();

      // Then its processes, port and data are gone
      expect(emulator.tenants()).toEqual([]);
      expect(pids.filter(processAlive)).toEqual([]);
      expect(await portOpen(Number(new URL(tenant?.server ?? "").port))).toBe(false);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await emulator.stop();
      await dirs.cleanup();
    }
  });

  /** `pnpm emulator:nvke … --tenant-api-servers` as a child; resolves once capd-demo's server runs. */
  async function emulatorWithTenant(
    through: "wrapper" | "direct",
  ): Promise<{ child: ChildProcess; pids: number[]; dataDir: string; port: number; cleanup: () => Promise<void> }> {
    const dirs = await tempDir("nvke-tenants-kill-");
    // The wrapper re-executes main.ts with --conditions=source; "direct" is that inner process.
    const node = through === "wrapper" ? [mainTs] : ["--conditions=source", mainTs];
    const child = spawn(
      process.execPath,
      [
        ...node,
        "--kubeconfig",
        admin,
        "--state",
        join(dirs.path, "state.json"),
        "--provision-ms",
        "200",
        "--tenant-api-servers",
        "--tenant-bin-dir",
        binDir,
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, TMPDIR: dirs.path } },
    );
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.setEncoding("utf8").once("data", (chunk: string) => resolve(chunk.trim()));
      child.once("exit", () => reject(new Error(`the emulator exited:\n${stderr}`)));
    });
    const client = createNvkeClient({ baseUrl: url });
    await client.createMachineImage((await example("machineimage.yaml")) as never);
    await client.createClusterRelease((await example("clusterrelease.yaml")) as never);
    await client.createCluster({
      ...((await example("capd-cluster.yaml")) as CreateClusterRequest),
      name: `kill-${through}`,
    });
    await eventually(async () => expect(stderr).toMatch(/API server at https:\/\/127\.0\.0\.1:\d+/), 60_000);
    const port = Number(/API server at https:\/\/127\.0\.0\.1:(\d+)/.exec(stderr)?.[1]);
    const dataDir = /data in (\S+)/.exec(stderr)?.[1] ?? "";
    return {
      child,
      pids: await tenantProcesses(dataDir),
      dataDir,
      port,
      cleanup: async () => {
        child.kill("SIGKILL");
        await core
          .deleteNamespacedSecret({ namespace: "nvke-clusters", name: `kill-${through}-kubeconfig` })
          .catch(() => {});
        await dirs.cleanup();
      },
    };
  }

  test("kill -9 of the emulator — pnpm emulator:nvke's wrapper process, or the emulator process itself — leaves no tenant process, port or data", async () => {
    // Given two emulator processes, each with a tenant API server
    const tenants = await Promise.all([emulatorWithTenant("wrapper"), emulatorWithTenant("direct")]);
    try {
      for (const tenant of tenants) {
        expect(tenant.pids).toHaveLength(2);
        expect(tenant.pids.every(processAlive)).toBe(true);
      }

      // When each is killed outright
      for (const tenant of tenants) tenant.child.kill("SIGKILL");

      // Then etcd and kube-apiserver go too, with their ports and data
      await eventually(
        async () => expect(tenants.flatMap((t) => t.pids).filter(processAlive)).toEqual([]),
        20_000,
        200,
      );
      for (const tenant of tenants) expect(await portOpen(tenant.port)).toBe(false);
      await eventually(
        async () => expect(tenants.map((t) => existsSync(t.dataDir))).toEqual([false, false]),
        5_000,
        200,
      );
    } finally {
      for (const tenant of tenants) await tenant.cleanup();
    }
  });
});
