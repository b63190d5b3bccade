import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { type CreateClusterRequest, createNvkeClient } from "@nodekit/nvke-api";
import { eventually, userErrorOf } from "@nodekit/test-utils";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningEmulator, startEmulator } from "./index.ts";
import { authOff, FAST, stateFile } from "./test-support.ts";

const examples = join(import.meta.dirname, "../../../examples");
const example = async (name: string) => load(await readFile(join(examples, name), "utf8")) as never;

async function publishReleases(url: string): Promise<void> {
  const client = createNvkeClient({ baseUrl: url });
  await client.createMachineImage(await example("machineimage.yaml"));
  await client.createClusterRelease(await example("clusterrelease.yaml"));
  await client.createNodePoolRelease(await example("nodepoolrelease.yaml"));
}

function clusterRequest(name: string, replicas = 1): CreateClusterRequest {
  return {
    name,
    provider: "capd",
    clusterReleaseName: "nvke-1-31",
    controlPlaneConfig: { replicas },
    network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12", nodeCIDRMaskSize: 24 },
    nico: { instanceType: "mock.x86.small" },
  };
}

describe("the emulator over HTTP, with the typed client", () => {
  let kubeconfigPath: string;
  let clustersNamespace: string;
  const running: RunningEmulator[] = [];
  const start = async (options: Partial<Parameters<typeof startEmulator>[0]> = {}) => {
    const emulator = await startEmulator({
      kubeconfigPath,
      stateFile: await stateFile(),
      timing: FAST,
      clustersNamespace,
      ...options,
    });
    running.push(emulator);
    return emulator;
  };

  beforeAll(async () => {
    const plane = await useControlPlane();
    kubeconfigPath = plane.adminKubeconfigPath;
    await authOff(clientsFor(kubeconfigPath).core);
    clustersNamespace = await plane.createNamespace("nvke-clusters");
  });
  afterAll(async () => {
    await Promise.all(running.map((emulator) => emulator.stop()));
  });

  test("the controller's refusals reach the client verbatim, with their exit codes", async () => {
    const emulator = await start({ controlPlaneController: false });
    await publishReleases(emulator.url);
    const client = createNvkeClient({ baseUrl: emulator.url });
    const cluster = await client.createCluster(clusterRequest("rules"));

    // A second cluster of that name
    const duplicate = await userErrorOf(client.createCluster(clusterRequest("rules")));
    expect([duplicate.code, duplicate.exitCode, duplicate.message]).toEqual([
      "CONTROLLER_CONFLICT",
      ExitCode.Conflict,
      'cluster "rules" already exists',
    ]);

    // An unknown field, with its detail as a problem
    const unknown = await userErrorOf(client.createCluster({ ...clusterRequest("other"), colour: "blue" } as never));
    expect(unknown.exitCode).toBe(ExitCode.Rejected);
    expect(unknown.problems.map((p) => [p.path?.join("."), p.message])).toEqual([
      [
        "colour",
        "is not a known field; the fields here are name, description, provider, clusterReleaseName, clusterReleaseID, controlPlaneConfig, network, nico, infra, labels",
      ],
    ]);

    // A node pool for a cluster that does not exist
    const missingID = "00000000-0000-4000-8000-000000000001";
    const missing = await userErrorOf(
      client.createNodePool({
        name: "w",
        nodeNamePrefix: "w",
        desiredNodeCount: 1,
        clusterID: missingID,
        nico: { instanceType: "x" },
      }),
    );
    expect([missing.exitCode, missing.message]).toEqual([ExitCode.NotFound, `cluster ${missingID} not found`]);

    // Scale-up past the pod CIDR
    const workers = await client.createNodePool({
      name: "workers",
      nodeNamePrefix: "rules-worker",
      desiredNodeCount: 2,
      clusterID: cluster.id,
      nico: { instanceType: "mock.x86.medium" },
    });
    const full = await userErrorOf(client.scaleNodePool(workers.id, 300));
    expect([full.exitCode, full.message]).toEqual([
      ExitCode.Rejected,
      'cannot scale node pool "workers" to 300 nodes: pod CIDR 10.244.0.0/16 has room for 256 nodes with /24 per node (control plane uses 1)',
    ]);
    expect((await client.scaleNodePool(workers.id, 5)).desiredNodeCount).toBe(5);

    // The last joined control-plane pool, with the control-plane controller off
    const cp = await eventually(async () => {
      const pool = await client.getNodePoolByName(cluster.id, "control-plane");
      expect(pool.status.readyNodes).toBe(1);
      return pool;
    });
    const last = await userErrorOf(client.deleteNodePool(cp.id));
    expect([last.exitCode, last.message]).toEqual([
      ExitCode.Conflict,
      'node pool "control-plane" is the last joined control-plane pool of cluster "rules"; delete the cluster instead',
    ]);

    // Immutable fields in a merge patch
    const immutable = await userErrorOf(client.patchCluster(cluster.id, { network: { podCIDR: "10.0.0.0/8" } }));
    expect(immutable.message).toBe(
      "cluster patch is invalid: network: is immutable; create a new cluster to change it",
    );

    // And get by name is one request that resolves the ID
    expect((await client.getClusterByName("rules")).id).toBe(cluster.id);
  });

  test("wrong content types, malformed JSON, bad paging and unknown routes get the error body", async () => {
    const emulator = await start();
    const post = (body: string, type = "application/json") =>
      fetch(`${emulator.url}/api/v1/clusters`, { method: "POST", headers: { "content-type": type }, body });
    const malformed = await post("{not json");
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { reason: string } }).error.reason).toBe("BadRequest");
    expect((await post("{}", "text/plain")).status).toBe(415);
    const patch = await fetch(`${emulator.url}/api/v1/clusters/x`, {
      method: "PATCH",
      headers: { "content-type": "application/json-patch+json" },
      body: "[]",
    });
    expect(patch.status).toBe(415);
    expect((await fetch(`${emulator.url}/api/v1/clusters?limit=5000`)).status).toBe(400);
    expect((await fetch(`${emulator.url}/api/v1/clusters?continue=garbage`)).status).toBe(400);
    expect((await fetch(`${emulator.url}/api/v2/things`)).status).toBe(404);
    const wrongMethod = await fetch(`${emulator.url}/api/v1/clusters`, { method: "PUT" });
    expect([wrongMethod.status, wrongMethod.headers.get("allow")]).toEqual([405, "GET, POST"]);
  });

  test("chaos (emulator-only) answers the next request with a proxy's HTML 500", async () => {
    const emulator = await start();
    const client = createNvkeClient({ baseUrl: emulator.url });
    emulator.chaos("html500");
    const error = await userErrorOf(client.listClustersPage());
    expect([error.code, error.exitCode]).toEqual(["CONTROLLER_BAD_RESPONSE", ExitCode.Unreachable]);
    expect(error.message).toContain("HTTP 500, text/html");
    // Only the next one
    expect((await client.listClustersPage()).items).toEqual([]);
    // And over HTTP, for tests that run the emulator as a process
    await fetch(`${emulator.url}/_emulator/chaos`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mode: "json500" }),
    });
    const server = await userErrorOf(client.listClustersPage());
    expect([server.code, server.message]).toEqual(["CONTROLLER_ERROR", "internal error: emulated failure (chaos)"]);
  });

  test("a restarted emulator keeps its state and resumes transitions, kubeconfig Secret included", async () => {
    // Given a cluster still Provisioning when the emulator stops
    const file = await stateFile();
    const slow = { ...FAST, provisionMs: 1500 };
    const first = await start({ stateFile: file, timing: slow });
    await publishReleases(first.url);
    const created = await createNvkeClient({ baseUrl: first.url }).createCluster(clusterRequest("survivor"));
    await first.stop();

    // When a new emulator starts on the same state file after provisioning fell due
    await new Promise((r) => setTimeout(r, 1600));
    const second = await start({ stateFile: file, timing: slow });
    const client = createNvkeClient({ baseUrl: second.url });

    // Then the cluster is there, goes Ready, and its Secret is written
    const ready = await eventually(async () => {
      const cluster = await client.getCluster(created.id);
      expect(cluster.status.phase).toBe("Ready");
      return cluster;
    });
    expect(ready.updatedAt).toBe(new Date(Date.parse(created.createdAt) + 1500).toISOString());
    const { core } = clientsFor(kubeconfigPath);
    const secret = await core.readNamespacedSecret({ name: "survivor-kubeconfig", namespace: clustersNamespace });
    expect(secret.data?.value).toBeTruthy();
    expect((await client.listClusterReleasesPage()).items.map((r) => r.name)).toEqual(["nvke-1-31"]);
  });

  test("paging: 2,500 clusters in pages of 1000 by opaque continue tokens, each once, in name order", async () => {
    const emulator = await start();
    await emulator.seed({ clusters: 2500, namePrefix: "paged" });
    const seen: string[] = [];
    const client = createNvkeClient({ baseUrl: emulator.url, log: (line) => seen.push(line) });
    const names: string[] = [];
    for await (const cluster of client.listClusters({ limit: 1000 })) names.push(cluster.name);
    expect(names).toHaveLength(2500);
    expect(new Set(names).size).toBe(2500);
    expect(names).toEqual([...names].sort());
    expect(seen).toHaveLength(3);
    // The default page is 500
    const first = await client.listClustersPage();
    expect(first.items).toHaveLength(500);
    expect(first.continue).toBeTruthy();
  });
});

describe("pnpm emulator:nvke", () => {
  test("runs in the foreground, prints its URL on stdout once ready, and stops on SIGTERM", async () => {
    const plane = await useControlPlane();
    const file = await stateFile();
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, "main.ts"), "--kubeconfig", plane.adminKubeconfigPath, "--port", "0", "--state", file],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        const line = out.split("\n")[0];
        if (out.includes("\n") && line !== undefined) resolve(line);
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const startupMs = performance.now() - started;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok" });
    const exit = new Promise<number | null>((resolve) => child.on("exit", resolve));
    child.kill("SIGTERM");
    expect(await exit).toBe(0);
    expect(stderr).toContain("nvke-emulator: auth off");
    expect(JSON.parse(await readFile(file, "utf8")).version).toBe(1);
    process.stderr.write(`emulator start to URL: ${Math.round(startupMs)} ms\n`);
  });

  test("without --kubeconfig it says what is missing and exits 2", async () => {
    const child = spawn(process.execPath, [join(import.meta.dirname, "main.ts")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("--kubeconfig is required");
  });
});
