import { describe, expect, test } from "vitest";
import { ApiError } from "./api-error.ts";
import {
  type ControllerContext,
  createCluster,
  createClusterRelease,
  createMachineImage,
  createNodePool,
  deleteCluster,
  deleteNodePool,
  patchCluster,
  patchNodePool,
} from "./controller.ts";
import { advance, type EmulatorState, emptyState, nextDueAt, renderNodePool, type Timing } from "./state.ts";
import { parseState } from "./store.ts";

// The controller's rules as pure functions over the state, with a fake clock: no server,
// no site cluster. The kubeconfig Secret step is played by `secretWritten`.

const timing: Timing = { provisionMs: 1000, deleteMs: 500, nodeMs: 100 };
const digest = `sha256:${"a".repeat(64)}`;

function world(options: { controlPlaneController?: boolean } = {}) {
  const state = emptyState();
  let now = 1_700_000_000_000;
  let ids = 0;
  const ctx = (): ControllerContext => ({
    now,
    timing,
    controlPlaneController: options.controlPlaneController ?? true,
    clustersNamespace: "nvke-clusters",
    newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, "0")}`,
  });
  createMachineImage(
    state,
    {
      name: "img",
      version: "1.0.0",
      kubernetesVersion: "v1.31.4",
      os: { distribution: "ubuntu", version: "24.04" },
      architecture: "amd64",
      image: `registry.example/img@${digest}`,
    },
    ctx(),
  );
  createClusterRelease(
    state,
    {
      name: "r1",
      version: "1.0.0",
      kubernetesVersion: "v1.31.4",
      machineImageName: "img",
      components: [{ name: "kube-apiserver", version: "v1.31.4", image: `registry.example/kas@${digest}` }],
    },
    ctx(),
  );
  return {
    state,
    ctx,
    /** Moves the clock and settles everything due, writing kubeconfig Secrets at once. */
    tick(ms: number) {
      now += ms;
      advance(state, now, timing);
      for (const record of Object.values(state.clusters)) {
        if (record.kubeconfigSecret === "pending") record.kubeconfigSecret = "written";
      }
      advance(state, now, timing);
    },
  };
}

function clusterRequest(name: string, overrides: Record<string, unknown> = {}) {
  return {
    name,
    provider: "nico",
    clusterReleaseName: "r1",
    controlPlaneConfig: { replicas: 3 },
    network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12" },
    nico: { instanceType: "mock.small" },
    ...overrides,
  };
}

function poolRequest(
  clusterID: string,
  name: string,
  desiredNodeCount: number,
  overrides: Record<string, unknown> = {},
) {
  return {
    name,
    nodeNamePrefix: name,
    desiredNodeCount,
    clusterID,
    nico: { instanceType: "mock.small" },
    ...overrides,
  };
}

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected the controller to refuse");
}

const pool = (state: EmulatorState, name: string) => {
  const record = Object.values(state.nodePools).find((r) => r.pool.name === name);
  if (record === undefined) throw new Error(`no pool ${name}`);
  return renderNodePool(state, record);
};

describe("clusters", () => {
  test("go Provisioning → Ready after provisionMs, with a control-plane pool of controlPlaneConfig.replicas", () => {
    const { state, ctx, tick } = world();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    expect(cluster.status.phase).toBe("Provisioning");
    expect(pool(state, "control-plane")).toMatchObject({ role: "control-plane", desiredNodeCount: 3 });
    tick(999);
    expect(state.clusters[cluster.id]?.cluster.status.phase).toBe("Provisioning");
    tick(1);
    expect(state.clusters[cluster.id]?.cluster.status).toMatchObject({ phase: "Ready", controlPlaneReady: true });
    // Stamped with when it was due, not when it was noticed
    expect(state.clusters[cluster.id]?.cluster.updatedAt).toBe(new Date(1_700_000_001_000).toISOString());
  });

  test("a name is unique: 409", () => {
    const { state, ctx } = world();
    createCluster(state, clusterRequest("c1"), ctx());
    const error = refusal(() => createCluster(state, clusterRequest("c1"), ctx()));
    expect([error.status, error.message]).toEqual([409, 'cluster "c1" already exists']);
  });

  test("unknown fields and bad values are 422 with one detail per field", () => {
    const { state, ctx } = world();
    const error = refusal(() =>
      createCluster(
        state,
        clusterRequest("c1", { colour: "blue", network: { podCIDR: "10.244.0.0/33", serviceCIDR: "10.96.0.0/12" } }),
        ctx(),
      ),
    );
    expect(error.status).toBe(422);
    expect(error.details).toEqual([
      { field: "network.podCIDR", message: "must be a CIDR such as 10.244.0.0/16" },
      {
        field: "colour",
        message:
          "is not a known field; the fields here are name, description, provider, clusterReleaseName, clusterReleaseID, controlPlaneConfig, network, nico, infra, labels",
      },
    ]);
    expect(error.toBody().error.reason).toBe("Invalid");
  });

  test("a missing cluster release is 422 naming it; overlapping pod and service CIDRs are 422", () => {
    const { state, ctx } = world();
    expect(
      refusal(() => createCluster(state, clusterRequest("c1", { clusterReleaseName: "nope" }), ctx())).message,
    ).toMatch(/^cluster release "nope" does not exist/);
    expect(
      refusal(() =>
        createCluster(
          state,
          clusterRequest("c1", { network: { podCIDR: "10.96.0.0/16", serviceCIDR: "10.96.0.0/12" } }),
          ctx(),
        ),
      ).message,
    ).toBe("pod CIDR 10.96.0.0/16 overlaps service CIDR 10.96.0.0/12");
  });

  test("a merge patch changes only its fields, null clears, immutable fields are 422", () => {
    const { state, ctx } = world();
    const cluster = createCluster(
      state,
      clusterRequest("c1", { description: "first", labels: { team: "a", tier: "gold" } }),
      ctx(),
    );
    const patched = patchCluster(state, cluster.id, { description: null, labels: { tier: null, env: "lab" } }, ctx());
    expect(patched.description).toBeUndefined();
    expect(patched.labels).toEqual({ team: "a", env: "lab" });
    expect(patched.network).toEqual(cluster.network);

    const immutable = refusal(() => patchCluster(state, cluster.id, { network: { podCIDR: "10.0.0.0/8" } }, ctx()));
    expect(immutable.status).toBe(422);
    expect(immutable.details).toEqual([
      { field: "network", message: "is immutable; create a new cluster to change it" },
    ]);
    const readOnly = refusal(() => patchCluster(state, cluster.id, { status: { phase: "Ready" } }, ctx()));
    expect(readOnly.details).toEqual([{ field: "status", message: "is set by the controller and cannot be patched" }]);
    // Restating an immutable field's current value is not a change
    expect(patchCluster(state, cluster.id, { name: "c1", labels: { x: "1" } }, ctx()).labels.x).toBe("1");
  });

  test("patching controlPlaneConfig.replicas scales the control-plane pool", () => {
    const { state, ctx } = world();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    patchCluster(state, cluster.id, { controlPlaneConfig: { replicas: 5 } }, ctx());
    expect(pool(state, "control-plane").desiredNodeCount).toBe(5);
  });

  test("deletion is asynchronous and takes the pools along", () => {
    const { state, ctx, tick } = world();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    tick(2000);
    expect(deleteCluster(state, cluster.id, ctx()).status.phase).toBe("Deleting");
    expect(pool(state, "control-plane").status.phase).toBe("Deleting");
    tick(499);
    expect(state.clusters[cluster.id]).toBeDefined();
    tick(1);
    expect(state.clusters[cluster.id]).toBeUndefined();
    expect(Object.keys(state.nodePools)).toEqual([]);
    expect(state.secretsToDelete).toEqual(["c1"]);
  });
});

describe("node pools", () => {
  test("nodes go Pending → Provisioning → Running one step per nodeMs, workers only once the cluster is Ready", () => {
    const { state, ctx, tick } = world();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    createNodePool(state, poolRequest(cluster.id, "workers", 2), ctx());
    tick(500);
    expect(pool(state, "workers").status.nodes.map((n) => n.state)).toEqual(["Pending", "Pending"]);
    expect(pool(state, "workers").status.message).toBe('waiting for cluster "c1" to become Ready before nodes join');
    expect(pool(state, "control-plane").status.readyNodes).toBe(3);
    tick(500); // Ready at 1000
    tick(100);
    expect(pool(state, "workers").status.nodes.map((n) => n.state)).toEqual(["Provisioning", "Provisioning"]);
    tick(100);
    expect(pool(state, "workers").status).toMatchObject({ phase: "Ready", readyNodes: 2, pendingNodes: 0 });
    expect(pool(state, "workers").status.nodes.map((n) => n.name)).toEqual(["workers-0", "workers-1"]);
    expect(nextDueAt(state, timing)).toBeUndefined();
  });

  test("an unknown cluster is 404; a pool name is unique within its cluster (409) but not across clusters", () => {
    const { state, ctx } = world();
    const missing = "00000000-0000-4000-8000-999999999999";
    expect(refusal(() => createNodePool(state, poolRequest(missing, "w", 1), ctx()))).toMatchObject({
      status: 404,
      message: `cluster ${missing} not found`,
    });
    const c1 = createCluster(state, clusterRequest("c1"), ctx());
    const c2 = createCluster(state, clusterRequest("c2"), ctx());
    createNodePool(state, poolRequest(c1.id, "workers", 1), ctx());
    createNodePool(state, poolRequest(c2.id, "workers", 1), ctx());
    expect(refusal(() => createNodePool(state, poolRequest(c1.id, "workers", 1), ctx()))).toMatchObject({
      status: 409,
      message: 'node pool "workers" already exists in cluster "c1"',
    });
    expect(refusal(() => createNodePool(state, poolRequest(c1.id, "control-plane", 1), ctx())).status).toBe(409);
  });

  test("a pool carries the same kind of payload as its cluster", () => {
    const { state, ctx } = world();
    const c1 = createCluster(state, clusterRequest("c1"), ctx());
    const error = refusal(() =>
      createNodePool(
        state,
        poolRequest(c1.id, "w", 1, { nico: undefined, infra: { machineTemplate: { apiVersion: "a/v1", kind: "K" } } }),
        ctx(),
      ),
    );
    expect(error.status).toBe(422);
    expect(error.message).toBe(
      'a node pool carries the same kind of payload as its cluster: cluster "c1" has a nico payload, this node pool infra',
    );
  });

  test("scale-up past the pod CIDR's room is 422 in the controller's words", () => {
    const { state, ctx } = world();
    const c1 = createCluster(state, clusterRequest("c1"), ctx());
    const workers = createNodePool(state, poolRequest(c1.id, "workers", 10), ctx());
    const error = refusal(() => patchNodePool(state, workers.id, { desiredNodeCount: 300 }, ctx()));
    expect(error.status).toBe(422);
    expect(error.message).toBe(
      'cannot scale node pool "workers" to 300 nodes: pod CIDR 10.244.0.0/16 has room for 256 nodes with /24 per node (control plane uses 3)',
    );
    // 253 fit exactly beside the control plane; 254 does not
    expect(patchNodePool(state, workers.id, { desiredNodeCount: 253 }, ctx()).desiredNodeCount).toBe(253);
    const c2 = createCluster(state, clusterRequest("c2"), ctx());
    createNodePool(state, poolRequest(c2.id, "a", 200), ctx());
    expect(refusal(() => createNodePool(state, poolRequest(c2.id, "b", 60), ctx())).message).toBe(
      'cannot create node pool "b" with 60 nodes: pod CIDR 10.244.0.0/16 has room for 256 nodes with /24 per node (control plane uses 3, other node pools use 200)',
    );
  });

  test("scale-down removes only Pending nodes; Running ones stay and the status says so", () => {
    const { state, ctx, tick } = world();
    const c1 = createCluster(state, clusterRequest("c1"), ctx());
    tick(1000);
    const workers = createNodePool(state, poolRequest(c1.id, "workers", 2), ctx());
    tick(200); // both Running
    patchNodePool(state, workers.id, { desiredNodeCount: 5 }, ctx()); // 3 more, Pending
    tick(100); // those 3 Provisioning
    patchNodePool(state, workers.id, { desiredNodeCount: 6 }, ctx()); // 1 more Pending
    const scaled = patchNodePool(state, workers.id, { desiredNodeCount: 1 }, ctx());
    // The Pending one went; 2 Running and 3 Provisioning stay
    expect(scaled.desiredNodeCount).toBe(1);
    expect(scaled.status.nodes.map((n) => n.state)).toEqual([
      "Running",
      "Running",
      "Provisioning",
      "Provisioning",
      "Provisioning",
    ]);
    expect(scaled.status.phase).toBe("Scaling");
    tick(100);
    const settled = pool(state, "workers");
    expect(settled.status).toMatchObject({ phase: "Ready", readyNodes: 5, pendingNodes: 0 });
    expect(settled.status.message).toBe(
      "5 nodes are running but desiredNodeCount is 1: scaling down removes only pending nodes; running nodes stay until they are deleted",
    );
  });

  test("deletion drains: Pending nodes go at once, the others go Draining, then the pool is gone", () => {
    const { state, ctx, tick } = world();
    const c1 = createCluster(state, clusterRequest("c1"), ctx());
    tick(1000);
    const workers = createNodePool(state, poolRequest(c1.id, "workers", 2), ctx());
    tick(200);
    patchNodePool(state, workers.id, { desiredNodeCount: 3 }, ctx());
    const deleting = deleteNodePool(state, workers.id, ctx());
    expect(deleting.status.phase).toBe("Deleting");
    expect(deleting.status.nodes.map((n) => n.state)).toEqual(["Draining", "Draining"]);
    expect(refusal(() => patchNodePool(state, workers.id, { desiredNodeCount: 1 }, ctx())).status).toBe(409);
    tick(100);
    expect(state.nodePools[workers.id]).toBeUndefined();
  });

  test("control-plane controller off: the last joined control-plane pool cannot be deleted", () => {
    const { state, ctx, tick } = world({ controlPlaneController: false });
    const c1 = createCluster(state, clusterRequest("c1", { controlPlaneConfig: { replicas: 1 } }), ctx());
    tick(1000);
    const cp = pool(state, "control-plane");
    const error = refusal(() => deleteNodePool(state, cp.id, ctx()));
    expect([error.status, error.message]).toEqual([
      409,
      'node pool "control-plane" is the last joined control-plane pool of cluster "c1"; delete the cluster instead',
    ]);
    // With a second joined control-plane pool, the first may go
    createNodePool(state, poolRequest(c1.id, "cp2", 1, { role: "control-plane" }), ctx());
    tick(200);
    expect(deleteNodePool(state, cp.id, ctx()).status.phase).toBe("Deleting");
    const cp2 = pool(state, "cp2");
    expect(refusal(() => deleteNodePool(state, cp2.id, ctx())).status).toBe(409);
  });

  test("control-plane controller on: the control-plane pool follows controlPlaneConfig and is not deleted directly", () => {
    const { state, ctx, tick } = world();
    createCluster(state, clusterRequest("c1"), ctx());
    tick(1000);
    const cp = pool(state, "control-plane");
    expect(refusal(() => patchNodePool(state, cp.id, { desiredNodeCount: 5 }, ctx())).message).toBe(
      'node pool "control-plane" is the control plane of cluster "c1"; change the cluster\'s controlPlaneConfig.replicas instead',
    );
    expect(refusal(() => deleteNodePool(state, cp.id, ctx())).status).toBe(409);
  });

  test("a restart resumes: advancing a copy of the state later gives what advancing in steps gives", () => {
    const a = world();
    const c1 = createCluster(a.state, clusterRequest("c1"), a.ctx());
    createNodePool(a.state, poolRequest(c1.id, "workers", 3), a.ctx());
    const copy = structuredClone(a.state);
    for (let i = 0; i < 20; i++) a.tick(100);
    const resumed = world();
    Object.assign(resumed.state, copy);
    resumed.tick(2000);
    expect(resumed.state.nodePools).toEqual(a.state.nodePools);
    expect(resumed.state.clusters).toEqual(a.state.clusters);
  });
});

describe("the state file (issue 9: the emulator 17)", () => {
  test("what the controller leaves in the state, at every step, reads back through the state file's check", () => {
    const { state, ctx, tick } = world();
    const check = () => expect(parseState(Buffer.from(JSON.stringify(state)), "state.json")).toEqual(state);
    check();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    createNodePool(state, poolRequest(cluster.id, "workers", 2), ctx());
    check();
    tick(1000);
    tick(300);
    check();
    deleteCluster(state, cluster.id, ctx());
    check();
    tick(1000);
    check();
  });

  test("a file of the wrong shape is refused with each problem's line and field", () => {
    const { state, ctx } = world();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    const broken = JSON.parse(JSON.stringify(state)) as EmulatorState;
    const record = broken.clusters[cluster.id] as unknown as Record<string, Record<string, unknown>>;
    delete record.cluster?.name;
    (broken as unknown as Record<string, unknown>).nodePools = [];
    const text = JSON.stringify(broken, null, 2);
    const line = text.split("\n").findIndex((l) => l.includes('"cluster": {')) + 1;

    let message = "";
    try {
      parseState(Buffer.from(text), "/tmp/state.json");
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message.split("\n")[0]).toBe(
      "state file /tmp/state.json is not an NVKE emulator state file (version 1): 2 problems; move it aside to start empty",
    );
    expect(message).toContain(`/tmp/state.json:${line}: field clusters.${cluster.id}.cluster.name: is required`);
    expect(message).toMatch(/state\.json:\d+: field nodePools: must be a mapping, not a list/);
  });

  test.each([
    ["not JSON", "{", /is not valid JSON/],
    ["a list", "[]", /must be a mapping, not a list/],
    ["another version", '{"version": 2}', /field version: "?2"? must be 1/],
  ])("%s is refused", (_what, text, message) => {
    expect(() => parseState(Buffer.from(text), "s.json")).toThrow(message);
  });
});
