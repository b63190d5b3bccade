import { describe, expect, test } from "vitest";
import { ApiError } from "./api-error.ts";
import {
  type ControllerContext,
  createCluster,
  createClusterRelease,
  createMachineImage,
  createNodePool,
  createNodePoolRelease,
  deleteCluster,
  deleteNodePool,
  patchCluster,
  patchNodePool,
} from "./controller.ts";
import { type EmulatorState, nextDueAt, renderCluster, renderNodePool } from "./state.ts";
import { parseState } from "./store.ts";
import { clusterRequest, digest, poolRequest, timing, world } from "./test-world.ts";

// The controller's rules as pure functions over the state, with a fake clock: no server,
// no site cluster. The kubeconfig Secret step is played by `secretWritten`.

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
      'a node pool carries the same kind of payload as its cluster: cluster "c1" has a nico payload, and this node pool an infra payload',
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

describe("a merge patch changes only the fields it names", () => {
  test("a labels-only patch keeps the description; a description-only patch keeps the labels", () => {
    const { state, ctx } = world();
    const cluster = createCluster(state, clusterRequest("c1", { description: "first", labels: { team: "a" } }), ctx());
    expect(patchCluster(state, cluster.id, { labels: { x: "1" } }, ctx())).toMatchObject({
      description: "first",
      labels: { team: "a", x: "1" },
    });
    expect(patchCluster(state, cluster.id, { description: "second" }, ctx())).toMatchObject({
      description: "second",
      labels: { team: "a", x: "1" },
      controlPlaneConfig: { replicas: 3, nodeNamePrefix: "c1-cp" },
    });
  });

  test("scaling a pool keeps its labels, taints and node pool release", () => {
    const { state, ctx } = world();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    publish(state, ctx, "v1.31.4");
    const taints = [{ key: "gpu", value: "true", effect: "NoSchedule" as const }];
    const created = createNodePool(
      state,
      poolRequest(cluster.id, "gpus", 1, { labels: { gpu: "a100" }, taints, nodePoolReleaseName: "np-31" }),
      ctx(),
    );
    const scaled = patchNodePool(state, created.id, { desiredNodeCount: 2 }, ctx());
    expect(scaled).toMatchObject({
      desiredNodeCount: 2,
      labels: { gpu: "a100" },
      taints,
      nodePoolReleaseName: "np-31",
    });
    const relabelled = patchNodePool(state, created.id, { labels: { zone: "b" } }, ctx());
    expect(relabelled).toMatchObject({ desiredNodeCount: 2, labels: { gpu: "a100", zone: "b" }, taints });
  });
});

/** Publishes a machine image, a cluster release `r-<minor>` and a node pool release `np-<minor>` for this version. */
function publish(state: EmulatorState, ctx: () => ControllerContext, kubernetesVersion: string): void {
  const minor = kubernetesVersion.split(".")[1];
  const image = `img-${minor}`;
  createMachineImage(
    state,
    {
      name: image,
      version: "1.0.0",
      kubernetesVersion,
      os: { distribution: "ubuntu", version: "24.04" },
      architecture: "amd64",
      image: `registry.example/img@${digest}`,
    },
    ctx(),
  );
  const components = [{ name: "kube-apiserver", version: kubernetesVersion, image: `registry.example/kas@${digest}` }];
  createClusterRelease(
    state,
    { name: `r-${minor}`, version: "1.0.0", kubernetesVersion, machineImageName: image, components },
    ctx(),
  );
  createNodePoolRelease(
    state,
    { name: `np-${minor}`, version: "1.0.0", kubernetesVersion, machineImageName: image, components },
    ctx(),
  );
}

describe("release changes follow Cluster API's control-plane rules", () => {
  function upgradeWorld() {
    const w = world();
    for (const version of ["v1.27.3", "v1.29.1", "v1.30.2", "v1.31.4", "v1.32.0", "v1.34.1"]) {
      publish(w.state, w.ctx, version);
    }
    const cluster = createCluster(w.state, clusterRequest("c1", { clusterReleaseName: "r-31" }), w.ctx());
    return { ...w, cluster };
  }

  test("one minor version at a time: 1.31 → 1.32 is taken, 1.31 → 1.34 is refused with the controller's message", () => {
    const { state, ctx, cluster } = upgradeWorld();
    const skip = refusal(() => patchCluster(state, cluster.id, { clusterReleaseName: "r-34" }, ctx()));
    expect(skip.status).toBe(422);
    expect(skip.message).toBe(
      'cannot move cluster "c1" from Kubernetes v1.31.4 (cluster release "r-31") to v1.34.1 (cluster release "r-34"): a control plane is upgraded one minor version at a time; move to a v1.32 release first',
    );
    expect(skip.details).toEqual([{ field: "clusterReleaseName", message: "skips minor versions: v1.31 → v1.34" }]);
    expect(patchCluster(state, cluster.id, { clusterReleaseName: "r-32" }, ctx()).kubernetesVersion).toBe("v1.32.0");
  });

  test("no downgrade: 1.31 → 1.29 (or 1.30) is refused, and nothing changes", () => {
    const { state, ctx, cluster } = upgradeWorld();
    for (const release of ["r-29", "r-30"]) {
      const down = refusal(() =>
        patchCluster(state, cluster.id, { clusterReleaseName: release, labels: { a: "b" } }, ctx()),
      );
      expect(down.status).toBe(422);
      expect(down.message).toMatch(/: a control plane is never downgraded; pick a release of v1\.31\.4 or newer$/);
    }
    expect(state.clusters[cluster.id]?.cluster).toMatchObject({ clusterReleaseName: "r-31", labels: {} });
  });

  test("a node pool's release is never newer than its control plane", () => {
    const { state, ctx, cluster } = upgradeWorld();
    const newer = refusal(() =>
      createNodePool(state, poolRequest(cluster.id, "w", 1, { nodePoolReleaseName: "np-32" }), ctx()),
    );
    expect(newer.message).toBe(
      'node pool "w" cannot take node pool release "np-32" (Kubernetes v1.32.0): it is newer than cluster "c1"\'s control plane (v1.31.4), and workers are never newer than their control plane; upgrade the cluster first',
    );
    const pool = createNodePool(state, poolRequest(cluster.id, "w", 1, { nodePoolReleaseName: "np-30" }), ctx());
    expect(refusal(() => patchNodePool(state, pool.id, { nodePoolReleaseName: "np-32" }, ctx())).status).toBe(422);
    expect(refusal(() => patchNodePool(state, pool.id, { nodePoolReleaseName: "np-27" }, ctx())).message).toMatch(
      /more than 3 minor versions older than cluster "c1"'s control plane \(v1\.31\.4\)$/,
    );
    // Once the control plane is upgraded, the pool may follow.
    patchCluster(state, cluster.id, { clusterReleaseName: "r-32" }, ctx());
    expect(patchNodePool(state, pool.id, { nodePoolReleaseName: "np-32" }, ctx()).nodePoolReleaseName).toBe("np-32");
  });

  test("an upgrade that would leave a node pool more than three minor versions behind is refused", () => {
    const w = world();
    for (const version of ["v1.29.1", "v1.30.2", "v1.31.4", "v1.32.0", "v1.33.0"]) publish(w.state, w.ctx, version);
    const cluster = createCluster(w.state, clusterRequest("c1", { clusterReleaseName: "r-32" }), w.ctx());
    createNodePool(w.state, poolRequest(cluster.id, "old", 1, { nodePoolReleaseName: "np-29" }), w.ctx());
    const error = refusal(() => patchCluster(w.state, cluster.id, { clusterReleaseName: "r-33" }, w.ctx()));
    expect(error.message).toMatch(
      /: node pool "old" runs v1\.29\.1, and a kubelet may be at most 3 minor versions older than its control plane; upgrade the node pool first$/,
    );
  });
});

describe("node names are unique within a cluster", () => {
  test("two pools of one cluster cannot share a nodeNamePrefix (the control plane's included); other clusters may", () => {
    const { state, ctx } = world();
    const c1 = createCluster(state, clusterRequest("c1"), ctx());
    const c2 = createCluster(state, clusterRequest("c2"), ctx());
    createNodePool(state, poolRequest(c1.id, "a", 1, { nodeNamePrefix: "workers" }), ctx());
    const clash = refusal(() =>
      createNodePool(state, poolRequest(c1.id, "b", 1, { nodeNamePrefix: "workers" }), ctx()),
    );
    expect(clash.status).toBe(409);
    expect(clash.message).toBe(
      'nodeNamePrefix "workers" is already used by node pool "a" of cluster "c1": node names (<nodeNamePrefix>-<n>) must be unique within a cluster, so each pool needs a prefix of its own',
    );
    expect(
      refusal(() => createNodePool(state, poolRequest(c1.id, "b", 1, { nodeNamePrefix: "c1-cp" }), ctx())).message,
    ).toMatch(/already used by node pool "control-plane" of cluster "c1"/);
    expect(createNodePool(state, poolRequest(c2.id, "a", 1, { nodeNamePrefix: "workers" }), ctx()).name).toBe("a");
  });
});

describe("conditions, each stamped with when its status changed", () => {
  const at = (ms: number) => new Date(1_700_000_000_000 + ms).toISOString();

  test("Ready, ControlPlaneReady and WorkersReady follow the cluster and its pools", () => {
    const { state, ctx, tick } = world();
    const cluster = createCluster(state, clusterRequest("c1"), ctx());
    const record = () => state.clusters[cluster.id] as NonNullable<EmulatorState["clusters"][string]>;
    const conditions = () => renderCluster(state, record()).status.conditions;
    expect(conditions()).toEqual([
      expect.objectContaining({ type: "Ready", status: "False", reason: "Provisioning", lastTransitionTime: at(0) }),
      expect.objectContaining({ type: "ControlPlaneReady", status: "False", lastTransitionTime: at(0) }),
      expect.objectContaining({ type: "WorkersReady", status: "True", reason: "NoNodePools" }),
    ]);
    tick(1000);
    createNodePool(state, poolRequest(cluster.id, "workers", 2), ctx());
    expect(conditions()).toEqual([
      { type: "Ready", status: "True", reason: "Ready", lastTransitionTime: at(1000) },
      { type: "ControlPlaneReady", status: "True", reason: "Ready", lastTransitionTime: at(1000) },
      {
        type: "WorkersReady",
        status: "False",
        reason: "NodesProvisioning",
        message: 'node pool "workers": 0 of 2 nodes running',
        lastTransitionTime: at(1000),
      },
    ]);
    tick(200);
    expect(conditions()?.[2]).toEqual({
      type: "WorkersReady",
      status: "True",
      reason: "Ready",
      lastTransitionTime: at(1200),
    });
    // And each node says when it entered its state.
    expect(pool(state, "workers").status.nodes).toEqual([
      { name: "workers-0", state: "Running", lastTransitionTime: at(1200) },
      { name: "workers-1", state: "Running", lastTransitionTime: at(1200) },
    ]);
    tick(100);
    deleteCluster(state, cluster.id, ctx());
    expect(conditions()?.slice(0, 2)).toEqual([
      expect.objectContaining({ type: "Ready", status: "False", reason: "Deleting", lastTransitionTime: at(1300) }),
      expect.objectContaining({ type: "Deleting", status: "True", lastTransitionTime: at(1300) }),
    ]);
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
