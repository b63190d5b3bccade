import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  applyMergePatch,
  type Cluster,
  type ClusterPatch,
  createNvkeClient,
  type NodePool,
  type NodePoolPatch,
} from "@nodekit/nvke-api";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import fc from "fast-check";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type RunningEmulator, startEmulator } from "./index.ts";
import { authOff, stateFile } from "./test-support.ts";

// RFC 7396 end to end: random merge patches sent over HTTP to the emulator change exactly
// the fields they name, for clusters and for node pools (the bug: a labels-only patch
// cleared the description, and scaling cleared a pool's labels, taints and release).

const examples = join(import.meta.dirname, "../../../examples");
const example = async (name: string) => load(await readFile(join(examples, name), "utf8")) as never;

const token = fc.stringMatching(/^[a-z][a-z0-9]{0,4}$/);
const labelsPatch = fc.dictionary(token, fc.option(token, { nil: null }), { maxKeys: 3 });
/** A key absent, or present with one of the values. */
const maybe = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined });

const clusterPatch: fc.Arbitrary<ClusterPatch> = fc
  .record({
    description: maybe(fc.option(fc.string({ maxLength: 12 }), { nil: null })),
    labels: maybe(fc.option(labelsPatch, { nil: null })),
    controlPlaneConfig: maybe(fc.record({ replicas: fc.constantFrom(1, 3) })),
  })
  .map(withoutAbsent)
  .filter((patch) => Object.keys(patch).length > 0);

const taint = fc.record({
  key: token,
  value: token,
  effect: fc.constantFrom("NoSchedule" as const, "NoExecute" as const),
});
const nodePoolPatch: fc.Arbitrary<NodePoolPatch> = fc
  .record({
    desiredNodeCount: maybe(fc.integer({ min: 0, max: 3 })),
    labels: maybe(fc.option(labelsPatch, { nil: null })),
    taints: maybe(fc.option(fc.array(taint, { maxLength: 2 }), { nil: null })),
    nodePoolReleaseName: maybe(fc.constantFrom(null, "nvke-workers-1-31")),
  })
  .map(withoutAbsent)
  .filter((patch) => Object.keys(patch).length > 0);

/** The patch as JSON carries it: a key that is undefined is not there at all. */
function withoutAbsent<T extends object>(patch: T): T {
  return JSON.parse(JSON.stringify(patch)) as T;
}

const CLUSTER_SPEC = ["description", "labels", "controlPlaneConfig"] as const;
const POOL_SPEC = ["desiredNodeCount", "labels", "taints", "nodePoolReleaseName"] as const;

/** The fields a patch may change, and what the rest of the object must keep. */
function split<T extends object>(object: T, keys: readonly string[]) {
  const entries = Object.entries(object);
  const spec = Object.fromEntries(entries.filter(([key]) => keys.includes(key)));
  const {
    status: _status,
    updatedAt: _updatedAt,
    ...rest
  } = Object.fromEntries(entries.filter(([key]) => !keys.includes(key))) as Record<string, unknown>;
  return { spec, rest };
}

describe("merge patches through the emulator change only the fields they name (RFC 7396)", () => {
  let emulator: RunningEmulator;

  beforeAll(async () => {
    const plane = await useControlPlane();
    await authOff(clientsFor(plane.adminKubeconfigPath).core);
    emulator = await startEmulator({
      kubeconfigPath: plane.adminKubeconfigPath,
      stateFile: await stateFile(),
      // Nothing moves during the run: each patch meets the state the last one left.
      timing: { provisionMs: 3_600_000, deleteMs: 3_600_000, nodeMs: 3_600_000 },
      clustersNamespace: await plane.createNamespace("nvke-clusters"),
      authConfigTtlMs: 0,
    });
    const client = createNvkeClient({ baseUrl: emulator.url });
    await client.createMachineImage(await example("machineimage.yaml"));
    await client.createClusterRelease(await example("clusterrelease.yaml"));
    await client.createNodePoolRelease(await example("nodepoolrelease.yaml"));
  });
  afterAll(() => emulator?.stop());

  test("clusters: for any patch, the named fields merge and every other field is unchanged", async () => {
    const client = createNvkeClient({ baseUrl: emulator.url });
    const created = await client.createCluster({
      ...((await example("capd-cluster.yaml")) as object),
      name: "patched",
    } as never);
    let before: Cluster = created;
    await fc.assert(
      fc.asyncProperty(clusterPatch, async (patch) => {
        const after = await client.patchCluster(before.id, patch);
        const was = split(before, CLUSTER_SPEC);
        const now = split(after, CLUSTER_SPEC);
        const expected = applyMergePatch(was.spec, patch) as Record<string, unknown>;
        // labels are always an object: a patch with labels: null leaves {}
        expect(now.spec).toEqual({ ...expected, labels: expected.labels ?? {} });
        expect(now.rest).toEqual(was.rest);
        expect(await client.getCluster(before.id)).toEqual(after);
        before = after;
      }),
      { numRuns: 40 },
    );
  });

  test("node pools: for any patch (scaling included), the named fields merge and every other field is unchanged", async () => {
    const client = createNvkeClient({ baseUrl: emulator.url });
    const cluster = await client.createCluster({
      ...((await example("capd-cluster.yaml")) as object),
      name: "pools",
    } as never);
    let before: NodePool = await client.createNodePool({
      ...((await example("nico-mock-nodepool.yaml")) as object),
      clusterID: cluster.id,
      labels: { gpu: "a100" },
      taints: [{ key: "gpu", value: "true", effect: "NoSchedule" }],
    } as never);
    await fc.assert(
      fc.asyncProperty(nodePoolPatch, async (patch) => {
        const after = await client.patchNodePool(before.id, patch);
        const was = split(before, POOL_SPEC);
        const now = split(after, POOL_SPEC);
        const expected = applyMergePatch(was.spec, patch) as Record<string, unknown>;
        expect(now.spec).toEqual({ ...expected, labels: expected.labels ?? {}, taints: expected.taints ?? [] });
        expect(now.rest).toEqual(was.rest);
        before = after;
      }),
      { numRuns: 40 },
    );
  });
});
