import type {
  Cluster,
  ClusterRelease,
  Condition,
  MachineImage,
  NodePool,
  NodePoolRelease,
  NodeState,
} from "@nodekit/nvke-api";

/** How long the emulated controller takes for each asynchronous step. */
export interface Timing {
  /** Provisioning → Ready for a cluster. */
  provisionMs: number;
  /** Deleting → gone for a cluster. */
  deleteMs: number;
  /** One node step: Pending → Provisioning → Running, and Draining → removed. */
  nodeMs: number;
}

export const DEFAULT_TIMING: Timing = { provisionMs: 5_000, deleteMs: 3_000, nodeMs: 2_000 };

export interface NodeRecord {
  name: string;
  state: NodeState;
  /** When the node entered `state` (ms since the epoch). */
  since: number;
}

export interface ClusterRecord {
  /** The API object as served; `status` is kept current by {@link advance}. */
  cluster: Cluster;
  createdMs: number;
  readyMs?: number;
  deletingSinceMs?: number;
  /**
   * The Cluster API kubeconfig Secret in the site cluster: not yet due, due to be written,
   * written, or never written (clusters seeded in bulk for tests).
   */
  kubeconfigSecret: "none" | "pending" | "written" | "skipped";
}

export interface NodePoolRecord {
  /** The API object without the parts derived on read (status, clusterName). */
  pool: Omit<NodePool, "status" | "clusterName">;
  /** The control-plane pool the controller keeps from the cluster's controlPlaneConfig. */
  managed: boolean;
  nodes: NodeRecord[];
  /** Suffix of the next node's name (`<nodeNamePrefix>-<n>`). */
  nextIndex: number;
  deletingSinceMs?: number;
  /** Whether every desired node was Running at some point (Provisioning vs Scaling). */
  hasBeenReady: boolean;
}

/** Everything the emulator keeps, as written to its state file. */
export interface EmulatorState {
  version: 1;
  clusters: Record<string, ClusterRecord>;
  nodePools: Record<string, NodePoolRecord>;
  machineImages: Record<string, MachineImage>;
  clusterReleases: Record<string, ClusterRelease>;
  nodePoolReleases: Record<string, NodePoolRelease>;
  /** Names of clusters that are gone whose kubeconfig Secret is still to delete. */
  secretsToDelete: string[];
}

export function emptyState(): EmulatorState {
  return {
    version: 1,
    clusters: {},
    nodePools: {},
    machineImages: {},
    clusterReleases: {},
    nodePoolReleases: {},
    secretsToDelete: [],
  };
}

export const iso = (ms: number) => new Date(ms).toISOString();

export function poolsOf(state: EmulatorState, clusterID: string): NodePoolRecord[] {
  return Object.values(state.nodePools).filter((record) => record.pool.clusterID === clusterID);
}

/** The pod-CIDR blocks a pool holds or will hold: its desired count, or more while extra nodes still run. */
export function poolUsage(record: NodePoolRecord): number {
  if (record.deletingSinceMs !== undefined) return record.nodes.length;
  return Math.max(record.pool.desiredNodeCount, record.nodes.length);
}

/**
 * Moves every cluster and node pool forward to `now`. Each transition is stamped with
 * the time it was due, not the time this ran, so the result depends only on the state
 * and `now`: a restarted emulator (or a late timer) arrives at the same state.
 * Returns whether anything changed.
 */
export function advance(state: EmulatorState, now: number, timing: Timing): boolean {
  let changed = false;
  for (const [id, record] of Object.entries(state.clusters)) {
    const { cluster } = record;
    if (cluster.status.phase === "Provisioning" && now >= record.createdMs + timing.provisionMs) {
      // Like Cluster API, the kubeconfig Secret exists before the cluster reads Ready: the
      // emulator writes it (kubeconfigSecret "pending" → "written"), then marks it Ready.
      if (record.kubeconfigSecret === "none") {
        record.kubeconfigSecret = "pending";
        changed = true;
      } else if (record.kubeconfigSecret !== "pending") {
        markReady(record, timing);
        changed = true;
      }
    }
    if (cluster.status.phase === "Deleting" && record.deletingSinceMs !== undefined) {
      if (now >= record.deletingSinceMs + timing.deleteMs) {
        for (const pool of poolsOf(state, id)) delete state.nodePools[pool.pool.id];
        const written = record.kubeconfigSecret === "pending" || record.kubeconfigSecret === "written";
        if (written && !state.secretsToDelete.includes(cluster.name)) {
          state.secretsToDelete.push(cluster.name);
        }
        delete state.clusters[id];
        changed = true;
      }
    }
  }

  for (const [id, record] of Object.entries(state.nodePools)) {
    const cluster = state.clusters[record.pool.clusterID];
    if (cluster === undefined) {
      delete state.nodePools[id];
      changed = true;
      continue;
    }
    // Workers join a cluster whose control plane is up; control-plane nodes come up with it.
    const joinableFrom = record.pool.role === "control-plane" ? Date.parse(record.pool.createdAt) : cluster.readyMs;
    const remaining: NodeRecord[] = [];
    for (const node of record.nodes) {
      if (node.state === "Pending" && joinableFrom !== undefined && record.deletingSinceMs === undefined) {
        const start = Math.max(node.since, joinableFrom);
        if (now >= start + timing.nodeMs) {
          node.state = "Provisioning";
          node.since = start + timing.nodeMs;
          changed = true;
        }
      }
      if (node.state === "Provisioning" && now >= node.since + timing.nodeMs) {
        node.state = "Running";
        node.since += timing.nodeMs;
        changed = true;
      }
      if (node.state === "Draining" && now >= node.since + timing.nodeMs) {
        changed = true;
        continue;
      }
      remaining.push(node);
    }
    record.nodes = remaining;
    if (record.deletingSinceMs !== undefined && record.nodes.length === 0) {
      delete state.nodePools[id];
      changed = true;
      continue;
    }
    if (!record.hasBeenReady && isPoolReady(record)) {
      record.hasBeenReady = true;
      changed = true;
    }
  }
  return changed;
}

/** Provisioning → Ready, stamped with the time it was due. */
export function markReady(record: ClusterRecord, timing: Timing): void {
  const at = record.createdMs + timing.provisionMs;
  record.readyMs = at;
  const { message: _provisioning, ...rest } = record.cluster.status;
  record.cluster.status = { ...rest, phase: "Ready", controlPlaneReady: true };
  record.cluster.updatedAt = iso(at);
}

function isPoolReady(record: NodePoolRecord): boolean {
  return (
    record.deletingSinceMs === undefined &&
    record.nodes.length >= record.pool.desiredNodeCount &&
    record.nodes.every((node) => node.state === "Running")
  );
}

/** When the next transition is due (ms since the epoch), or undefined when nothing is moving. */
export function nextDueAt(state: EmulatorState, timing: Timing): number | undefined {
  let due = Number.POSITIVE_INFINITY;
  for (const record of Object.values(state.clusters)) {
    // A pending kubeconfig Secret is the reconciler's to write (and retry), not a timer's.
    if (record.cluster.status.phase === "Provisioning" && record.kubeconfigSecret !== "pending") {
      due = Math.min(due, record.createdMs + timing.provisionMs);
    }
    if (record.deletingSinceMs !== undefined) due = Math.min(due, record.deletingSinceMs + timing.deleteMs);
  }
  for (const record of Object.values(state.nodePools)) {
    const cluster = state.clusters[record.pool.clusterID];
    const joinableFrom = record.pool.role === "control-plane" ? Date.parse(record.pool.createdAt) : cluster?.readyMs;
    for (const node of record.nodes) {
      if (node.state === "Pending") {
        if (joinableFrom !== undefined && record.deletingSinceMs === undefined) {
          due = Math.min(due, Math.max(node.since, joinableFrom) + timing.nodeMs);
        }
      } else if (node.state !== "Running") {
        due = Math.min(due, node.since + timing.nodeMs);
      }
    }
    if (record.deletingSinceMs !== undefined && record.nodes.length === 0) due = Math.min(due, record.deletingSinceMs);
  }
  return Number.isFinite(due) ? due : undefined;
}

/** The node pool as served: status derived from its nodes. */
export function renderNodePool(state: EmulatorState, record: NodePoolRecord): NodePool {
  const cluster = state.clusters[record.pool.clusterID];
  const count = (s: NodeState) => record.nodes.filter((node) => node.state === s).length;
  const running = count("Running");
  const pending = count("Pending") + count("Provisioning");
  const desired = record.pool.desiredNodeCount;
  let phase: NodePool["status"]["phase"];
  let message: string | undefined;
  if (record.deletingSinceMs !== undefined) {
    phase = "Deleting";
    message = `draining ${record.nodes.length} ${plural(record.nodes.length, "node")} before removing them`;
  } else if (isPoolReady(record)) {
    phase = "Ready";
    if (record.nodes.length > desired) {
      message = `${record.nodes.length} nodes are running but desiredNodeCount is ${desired}: scaling down removes only pending nodes; running nodes stay until they are deleted`;
    }
  } else {
    phase = record.hasBeenReady ? "Scaling" : "Provisioning";
    if (record.pool.role === "worker" && cluster?.readyMs === undefined && count("Pending") > 0) {
      message = `waiting for cluster "${cluster?.cluster.name ?? record.pool.clusterID}" to become Ready before nodes join`;
    } else if (record.nodes.length > desired) {
      message = `${record.nodes.length - desired} ${plural(record.nodes.length - desired, "node")} above desiredNodeCount ${desired} already started provisioning and will stay`;
    } else {
      message = `${running} of ${desired} nodes running`;
    }
  }
  return {
    ...record.pool,
    clusterName: cluster?.cluster.name ?? "",
    status: {
      phase,
      ...(message === undefined ? {} : { message }),
      readyNodes: running,
      pendingNodes: pending,
      nodes: record.nodes.map((node) => ({ name: node.name, state: node.state, lastTransitionTime: iso(node.since) })),
    },
  };
}

export function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}

/**
 * The cluster as served: its status with conditions, each stamped with when its status
 * changed — derived from the record's own times (created, Ready, deletion started, each
 * node's state change), so the answer depends only on the state, as `advance` does.
 */
export function renderCluster(state: EmulatorState, record: ClusterRecord): Cluster {
  const { cluster } = record;
  const conditions: Condition[] = [];
  const created = iso(record.createdMs);
  if (record.deletingSinceMs !== undefined) {
    const since = iso(record.deletingSinceMs);
    conditions.push({
      type: "Ready",
      status: "False",
      reason: "Deleting",
      message: "the cluster is being deleted",
      lastTransitionTime: since,
    });
    conditions.push({
      type: "Deleting",
      status: "True",
      reason: "Deleting",
      message: cluster.status.message ?? "deleting",
      lastTransitionTime: since,
    });
  } else if (record.readyMs !== undefined) {
    conditions.push({ type: "Ready", status: "True", reason: "Ready", lastTransitionTime: iso(record.readyMs) });
  } else {
    conditions.push({
      type: "Ready",
      status: "False",
      reason: cluster.status.phase === "Failed" ? "Failed" : "Provisioning",
      ...(cluster.status.message === undefined ? {} : { message: cluster.status.message }),
      lastTransitionTime: created,
    });
  }
  conditions.push(
    record.readyMs !== undefined
      ? { type: "ControlPlaneReady", status: "True", reason: "Ready", lastTransitionTime: iso(record.readyMs) }
      : {
          type: "ControlPlaneReady",
          status: "False",
          reason: "WaitingForControlPlane",
          message: "the control-plane machines are being provisioned",
          lastTransitionTime: created,
        },
  );
  conditions.push(workersCondition(state, record));
  return { ...cluster, status: { ...cluster.status, conditions } };
}

function workersCondition(state: EmulatorState, record: ClusterRecord): Condition {
  const workers = poolsOf(state, record.cluster.id).filter(
    (pool) => pool.pool.role === "worker" && pool.deletingSinceMs === undefined,
  );
  const base = record.readyMs ?? record.createdMs;
  if (workers.length === 0) {
    return {
      type: "WorkersReady",
      status: "True",
      reason: "NoNodePools",
      message: "the cluster has no worker node pools",
      lastTransitionTime: iso(base),
    };
  }
  const waiting = workers.filter((pool) => !isPoolReady(pool));
  if (waiting.length === 0) {
    // All ready since the last node to come up did.
    const last = Math.max(base, ...workers.flatMap((pool) => pool.nodes.map((node) => node.since)));
    return { type: "WorkersReady", status: "True", reason: "Ready", lastTransitionTime: iso(last) };
  }
  const notRunning = waiting.flatMap((pool) => pool.nodes.filter((node) => node.state !== "Running"));
  const since = Math.min(
    ...notRunning.map((node) => node.since),
    ...waiting.map((pool) => Date.parse(pool.pool.updatedAt)),
  );
  const message = waiting
    .map((pool) => {
      const running = pool.nodes.filter((node) => node.state === "Running").length;
      return `node pool "${pool.pool.name}": ${running} of ${pool.pool.desiredNodeCount} nodes running`;
    })
    .join("; ");
  return {
    type: "WorkersReady",
    status: "False",
    reason: record.readyMs === undefined ? "WaitingForControlPlane" : "NodesProvisioning",
    message,
    lastTransitionTime: iso(since),
  };
}
