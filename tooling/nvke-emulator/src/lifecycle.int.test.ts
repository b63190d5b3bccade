import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CoreV1Api } from "@kubernetes/client-node";
import {
  type CreateClusterRequest,
  type CreateNodePoolRequest,
  CreateNodePoolRequestSchema,
  createNvkeClient,
  parseRequest,
} from "@nodekit/nvke-api";
import { eventually } from "@nodekit/test-utils";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningEmulator, startEmulator } from "./index.ts";
import { connectSite, type SiteCluster } from "./site.ts";
import { authOff, FAST, stateFile } from "./test-support.ts";

const examples = join(import.meta.dirname, "../../../examples");
const example = async (name: string) => load(await readFile(join(examples, name), "utf8"));

describe("cluster lifecycle against a real site cluster (auth off)", () => {
  let emulator: RunningEmulator;
  let namespace: string;
  let core: CoreV1Api;

  beforeAll(async () => {
    const plane = await useControlPlane();
    ({ core } = clientsFor(plane.adminKubeconfigPath));
    await authOff(core);
    namespace = await plane.createNamespace("nvke-clusters");
    emulator = await startEmulator({
      kubeconfigPath: plane.adminKubeconfigPath,
      stateFile: await stateFile(),
      timing: FAST,
      clustersNamespace: namespace,
      authConfigTtlMs: 0,
      log: (line) => process.env.NVKE_EMULATOR_DEBUG && process.stderr.write(`emulator: ${line}\n`),
    });
  });
  afterAll(() => emulator?.stop());

  test("the shipped examples are accepted as they are, in the order the docs give", async () => {
    // Given the emulator and the examples
    const client = createNvkeClient({ baseUrl: emulator.url });

    // When each is published in turn
    const image = await client.createMachineImage((await example("machineimage.yaml")) as never);
    const clusterRelease = await client.createClusterRelease((await example("clusterrelease.yaml")) as never);
    const nodePoolRelease = await client.createNodePoolRelease((await example("nodepoolrelease.yaml")) as never);
    const cluster = await client.createCluster((await example("capd-cluster.yaml")) as CreateClusterRequest);

    // Then they refer to each other
    expect(clusterRelease.machineImageID).toBe(image.id);
    expect(nodePoolRelease.machineImageName).toBe(image.name);
    expect(cluster).toMatchObject({
      name: "capd-demo",
      clusterReleaseID: clusterRelease.id,
      kubernetesVersion: "v1.31.4",
    });
    expect(cluster.status.phase).toBe("Provisioning");

    // And the node pool example is valid once it has the cluster's ID (what create nodepool --cluster fills in)
    const request = { ...((await example("nico-mock-nodepool.yaml")) as object), clusterID: cluster.id };
    const parsed = parseRequest(CreateNodePoolRequestSchema, request, { source: "nico-mock-nodepool.yaml" });
    expect(parsed.problems).toEqual([]);
    const pool = await client.createNodePool(request as CreateNodePoolRequest);
    expect(pool).toMatchObject({
      name: "workers",
      clusterID: cluster.id,
      desiredNodeCount: 2,
      clusterName: "capd-demo",
    });
    // Without it, validation names the field before anything is sent
    const unfilled = parseRequest(CreateNodePoolRequestSchema, await example("nico-mock-nodepool.yaml"), {
      source: "nico-mock-nodepool.yaml",
    });
    expect(unfilled.problems.map((p) => p.path?.join("."))).toEqual(["clusterID"]);
  });

  test("a cluster goes Ready with its kubeconfig Secret in the site cluster, and deletion removes both", async () => {
    const client = createNvkeClient({ baseUrl: emulator.url });
    const cluster = await client.getClusterByName("capd-demo");

    // When provisioning completes
    const ready = await eventually(async () => {
      const current = await client.getCluster(cluster.id);
      expect(current.status.phase).toBe("Ready");
      return current;
    });

    // Then the Cluster API Secret <name>-kubeconfig holds a kubeconfig under data.value
    expect(ready.status).toMatchObject({
      controlPlaneReady: true,
      kubeconfigSecret: { namespace, name: "capd-demo-kubeconfig" },
    });
    const secret = await core.readNamespacedSecret({ name: "capd-demo-kubeconfig", namespace });
    expect(secret.type).toBe("cluster.x-k8s.io/secret");
    expect(secret.metadata?.labels?.["cluster.x-k8s.io/cluster-name"]).toBe("capd-demo");
    const kubeconfig = load(Buffer.from(secret.data?.value ?? "", "base64").toString("utf8")) as {
      clusters: { cluster: { server: string; "certificate-authority-data": string } }[];
      users: { user: { token: string } }[];
      "current-context": string;
    };
    expect(kubeconfig.clusters[0]?.cluster.server).toBe(ready.status.controlPlaneEndpoint);
    expect(kubeconfig.clusters[0]?.cluster.server).toMatch(/^https:\/\/.+:6443$/);
    const caPem = Buffer.from(kubeconfig.clusters[0]?.cluster["certificate-authority-data"] ?? "", "base64").toString();
    const { X509Certificate } = await import("node:crypto");
    expect(new X509Certificate(caPem).ca).toBe(true);
    expect(kubeconfig.users[0]?.user.token).toMatch(/^nvke-emulator\.[0-9a-f]{48}$/);

    // And its workers join once the cluster is Ready: Pending → Provisioning → Running
    const pool = await client.getNodePoolByName(cluster.id, "workers");
    const running = await eventually(async () => {
      const current = await client.getNodePool(pool.id);
      expect(current.status.phase).toBe("Ready");
      return current;
    });
    expect(running.status).toMatchObject({ readyNodes: 2, pendingNodes: 0 });
    expect(running.status.nodes.map((n) => n.name)).toEqual(["capd-demo-worker-0", "capd-demo-worker-1"]);

    // When the cluster is deleted
    const deleting = await client.deleteCluster(cluster.id);
    expect(deleting.status.phase).toBe("Deleting");

    // Then it and its Secret go
    await eventually(async () => expect(await client.findClusterByName("capd-demo")).toBeUndefined());
    await eventually(async () => {
      const list = await core.listNamespacedSecret({ namespace });
      expect(list.items.map((s) => s.metadata?.name)).not.toContain("capd-demo-kubeconfig");
    });
  });

  test("the OpenAPI document and health are served", async () => {
    const client = createNvkeClient({ baseUrl: emulator.url });
    expect(await client.healthz()).toEqual({ status: "ok" });
    const doc = await client.openApi();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths as object)).toContain("/api/v1/clusters/{id}");
    expect(Object.keys((doc.components as { schemas: object }).schemas)).toContain("CreateClusterRequest");
  });
});

describe("a cluster that goes at the end of a reconcile pass (emulator clock, real site cluster)", () => {
  // Timing in emulator milliseconds, long enough that no real timer fires during the test:
  // the test moves the clock and runs the reconciler itself.
  const timing = { provisionMs: 100_000_000, deleteMs: 100_000_000, nodeMs: 100_000_000 };
  let emulator: RunningEmulator;
  let namespace: string;
  let core: CoreV1Api;
  let clock = Date.parse("2026-01-01T00:00:00Z");
  let onSecretWritten: (clusterName: string) => void = () => {};

  beforeAll(async () => {
    const plane = await useControlPlane();
    ({ core } = clientsFor(plane.adminKubeconfigPath));
    await authOff(core);
    namespace = await plane.createNamespace("nvke-clusters");
    const real = connectSite(plane.adminKubeconfigPath);
    // The real site cluster, with a hook after each kubeconfig Secret write.
    const site: SiteCluster = {
      server: real.server,
      readConfigMap: (ns, name) => real.readConfigMap(ns, name),
      reviewToken: (token, audience) => real.reviewToken(token, audience),
      deleteKubeconfigSecret: (ns, name) => real.deleteKubeconfigSecret(ns, name),
      async writeKubeconfigSecret(ns, name, kubeconfig) {
        await real.writeKubeconfigSecret(ns, name, kubeconfig);
        onSecretWritten(name);
      },
    };
    emulator = await startEmulator({
      kubeconfigPath: plane.adminKubeconfigPath,
      site,
      stateFile: await stateFile(),
      timing,
      clustersNamespace: namespace,
      authConfigTtlMs: 0,
      now: () => clock,
    });
  });
  afterAll(() => emulator?.stop());

  const secretOf = (cluster: string) =>
    core.readNamespacedSecret({ namespace, name: `${cluster}-kubeconfig` }).then(
      () => "present",
      (error: { code?: number }) => (error.code === 404 ? "gone" : Promise.reject(error)),
    );

  test("its kubeconfig Secret is still deleted", async () => {
    const client = createNvkeClient({ baseUrl: emulator.url });
    await client.createMachineImage((await example("machineimage.yaml")) as never);
    await client.createClusterRelease((await example("clusterrelease.yaml")) as never);
    const request = (await example("capd-cluster.yaml")) as CreateClusterRequest;
    const start = clock;

    // Cluster "old" comes up: its Secret is written.
    const old = await client.createCluster({ ...request, name: "old" });
    clock = start + timing.provisionMs;
    await emulator.reconcile();
    expect(await secretOf("old")).toBe("present");

    // "new" is created, then "old" is deleted; "new" falls due first.
    clock = start + 1.5 * timing.provisionMs;
    await client.createCluster({ ...request, name: "new" });
    clock = start + 2 * timing.provisionMs;
    await client.deleteCluster(old.id);
    const oldGoneAt = clock + timing.deleteMs;

    // The pass that writes "new"'s Secret starts before "old" is due to go; while it writes,
    // the clock passes that moment, so "old" goes in the pass's last step, after the step
    // that deletes Secrets of clusters that are gone.
    clock = start + 2.6 * timing.provisionMs;
    onSecretWritten = (name) => {
      if (name === "new") clock = oldGoneAt + 1;
    };
    await emulator.reconcile();
    expect((await client.listClustersPage()).items.map((c) => c.name)).toEqual(["new"]);

    // The Secret of "old" goes too, without anything else happening.
    await eventually(async () => expect(await secretOf("old")).toBe("gone"), 5_000);
    expect(await secretOf("new")).toBe("present");
  });
});
