import { cidrsOverlap, podCidrCapacity } from "@nodekit/emulator-kit";
import {
  applyMergePatch,
  CLUSTER_IMMUTABLE_FIELDS,
  CLUSTER_READ_ONLY_FIELDS,
  type Cluster,
  ClusterPatchSchema,
  type ClusterRelease,
  CreateClusterReleaseRequestSchema,
  CreateClusterRequestSchema,
  CreateMachineImageRequestSchema,
  CreateNodePoolReleaseRequestSchema,
  CreateNodePoolRequestSchema,
  type InfraPayload,
  isPlainObject,
  type MachineImage,
  type NicoPayload,
  NODEPOOL_IMMUTABLE_FIELDS,
  NODEPOOL_READ_ONLY_FIELDS,
  type NodePool,
  NodePoolPatchSchema,
  type NodePoolRelease,
  parseRequest,
  problemsToDetails,
} from "@nodekit/nvke-api";
import type * as z from "zod";
import { conflict, invalid, notFound } from "./api-error.ts";
import {
  type ClusterRecord,
  type EmulatorState,
  iso,
  type NodePoolRecord,
  type NodeRecord,
  plural,
  poolsOf,
  poolUsage,
  renderNodePool,
  type Timing,
} from "./state.ts";

/** What every operation needs besides the state: the clock and the emulator's settings. */
export interface ControllerContext {
  now: number;
  timing: Timing;
  /** Off: deleting a cluster's last joined control-plane pool is refused (seed step 14). */
  controlPlaneController: boolean;
  clustersNamespace: string;
  newId: () => string;
}

/** The name of the control-plane pool the controller keeps for every cluster. */
export const CONTROL_PLANE_POOL = "control-plane";

function validate<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const { value, problems } = parseRequest(schema, body, { source: what });
  if (problems.length === 0) return value as z.output<S>;
  const details = problemsToDetails(problems);
  throw invalid(`${what} is invalid: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, details);
}

/** Refuses patch keys that name immutable or controller-owned fields, each with its own reason. */
function checkPatchKeys(
  patch: unknown,
  immutable: readonly string[],
  readOnly: readonly string[],
  kind: string,
  current: Record<string, unknown>,
): void {
  if (!isPlainObject(patch)) {
    throw invalid(`a ${kind} patch must be a JSON object (a merge patch)`, [
      { field: "(body)", message: "must be a JSON object" },
    ]);
  }
  const details = [];
  for (const key of Object.keys(patch)) {
    if (immutable.includes(key)) {
      // A patch that restates the current value changes nothing, as with kubectl apply.
      if (JSON.stringify(applyMergePatch(current[key], patch[key])) === JSON.stringify(current[key])) continue;
      details.push({ field: key, message: `is immutable; create a new ${kind} to change it` });
    } else if (readOnly.includes(key)) {
      details.push({ field: key, message: "is set by the controller and cannot be patched" });
    }
  }
  if (details.length > 0) {
    throw invalid(`${kind} patch is invalid: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`, details);
  }
  for (const key of [...immutable, ...readOnly]) delete (patch as Record<string, unknown>)[key];
}

/**
 * The merge patch of these fields, holding only the keys the client's patch named: a field
 * it left out is absent here too (not `undefined`), so the merge leaves it as it is.
 */
function named<T extends object, K extends keyof T & string>(patch: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const result: Partial<Pick<T, K>> = {};
  for (const key of keys) if (Object.hasOwn(patch, key) && patch[key] !== undefined) result[key] = patch[key];
  return result;
}

// ---------------------------------------------------------------------------------------
// Releases

export function createMachineImage(state: EmulatorState, body: unknown, ctx: ControllerContext): MachineImage {
  const request = validate(CreateMachineImageRequestSchema, body, "CreateMachineImageRequest");
  if (Object.values(state.machineImages).some((image) => image.name === request.name)) {
    throw conflict(`machine image "${request.name}" already exists`);
  }
  const image: MachineImage = {
    id: ctx.newId(),
    ...request,
    digest: request.image.slice(request.image.indexOf("@") + 1),
    labels: request.labels ?? {},
    createdAt: iso(ctx.now),
  };
  state.machineImages[image.id] = image;
  return image;
}

function machineImageFor(state: EmulatorState, name: string, kubernetesVersion: string, owner: string): MachineImage {
  const image = Object.values(state.machineImages).find((candidate) => candidate.name === name);
  if (image === undefined) {
    throw invalid(`${owner} refers to machine image "${name}", which does not exist; create it first`, [
      { field: "machineImageName", message: `machine image "${name}" not found` },
    ]);
  }
  if (image.kubernetesVersion !== kubernetesVersion) {
    throw invalid(
      `${owner} is for Kubernetes ${kubernetesVersion} but machine image "${name}" is built for ${image.kubernetesVersion}`,
      [{ field: "kubernetesVersion", message: `must match machine image "${name}" (${image.kubernetesVersion})` }],
    );
  }
  return image;
}

export function createClusterRelease(state: EmulatorState, body: unknown, ctx: ControllerContext): ClusterRelease {
  const request = validate(CreateClusterReleaseRequestSchema, body, "CreateClusterReleaseRequest");
  if (Object.values(state.clusterReleases).some((release) => release.name === request.name)) {
    throw conflict(`cluster release "${request.name}" already exists`);
  }
  const owner = `cluster release "${request.name}"`;
  const image = machineImageFor(state, request.machineImageName, request.kubernetesVersion, owner);
  const release: ClusterRelease = {
    id: ctx.newId(),
    ...request,
    machineImageID: image.id,
    charts: request.charts ?? [],
    labels: request.labels ?? {},
    createdAt: iso(ctx.now),
  };
  state.clusterReleases[release.id] = release;
  return release;
}

export function createNodePoolRelease(state: EmulatorState, body: unknown, ctx: ControllerContext): NodePoolRelease {
  const request = validate(CreateNodePoolReleaseRequestSchema, body, "CreateNodePoolReleaseRequest");
  if (Object.values(state.nodePoolReleases).some((release) => release.name === request.name)) {
    throw conflict(`node pool release "${request.name}" already exists`);
  }
  const owner = `node pool release "${request.name}"`;
  const image = machineImageFor(state, request.machineImageName, request.kubernetesVersion, owner);
  if (
    request.clusterReleaseName !== undefined &&
    !Object.values(state.clusterReleases).some((release) => release.name === request.clusterReleaseName)
  ) {
    throw invalid(`${owner} refers to cluster release "${request.clusterReleaseName}", which does not exist`, [
      { field: "clusterReleaseName", message: `cluster release "${request.clusterReleaseName}" not found` },
    ]);
  }
  const release: NodePoolRelease = {
    id: ctx.newId(),
    ...request,
    machineImageID: image.id,
    labels: request.labels ?? {},
    createdAt: iso(ctx.now),
  };
  state.nodePoolReleases[release.id] = release;
  return release;
}

// ---------------------------------------------------------------------------------------
// Clusters

function resolveClusterRelease(state: EmulatorState, ref: { clusterReleaseName?: string; clusterReleaseID?: string }) {
  const releases = Object.values(state.clusterReleases);
  if (ref.clusterReleaseID !== undefined) {
    const release = state.clusterReleases[ref.clusterReleaseID];
    if (release === undefined) {
      throw invalid(`cluster release ${ref.clusterReleaseID} does not exist`, [
        { field: "clusterReleaseID", message: "not found" },
      ]);
    }
    if (ref.clusterReleaseName !== undefined && ref.clusterReleaseName !== release.name) {
      throw invalid(
        `cluster release ${ref.clusterReleaseID} is named "${release.name}", not "${ref.clusterReleaseName}"`,
        [{ field: "clusterReleaseName", message: `does not match clusterReleaseID (${release.name})` }],
      );
    }
    return release;
  }
  const release = releases.find((candidate) => candidate.name === ref.clusterReleaseName);
  if (release === undefined) {
    throw invalid(
      `cluster release "${ref.clusterReleaseName}" does not exist; publish it with \`nvkectl create clusterrelease -f\` first`,
      [{ field: "clusterReleaseName", message: `cluster release "${ref.clusterReleaseName}" not found` }],
    );
  }
  return release;
}

function tenantEndpoint(name: string, id: string): string {
  return `https://${name}.${id.slice(0, 8)}.tenants.nvke.internal:6443`;
}

export function createCluster(state: EmulatorState, body: unknown, ctx: ControllerContext): Cluster {
  const request = validate(CreateClusterRequestSchema, body, "CreateClusterRequest");
  const release = resolveClusterRelease(state, request);
  const { network } = request;
  if (cidrsOverlap(network.podCIDR, network.serviceCIDR)) {
    throw invalid(`pod CIDR ${network.podCIDR} overlaps service CIDR ${network.serviceCIDR}`, [
      { field: "network.serviceCIDR", message: `overlaps podCIDR ${network.podCIDR}` },
    ]);
  }
  const capacity = podCidrCapacity(network.podCIDR, network.nodeCIDRMaskSize);
  const replicas = request.controlPlaneConfig.replicas;
  if (capacity < replicas) {
    throw invalid(
      `pod CIDR ${network.podCIDR} has room for ${capacity} ${plural(capacity, "node")} with /${network.nodeCIDRMaskSize} per node; the control plane alone needs ${replicas}`,
      [{ field: "network.nodeCIDRMaskSize", message: `leaves room for ${capacity} ${plural(capacity, "node")}` }],
    );
  }
  const existing = Object.values(state.clusters).find((record) => record.cluster.name === request.name);
  if (existing !== undefined) {
    throw conflict(
      existing.cluster.status.phase === "Deleting"
        ? `cluster "${request.name}" already exists and is being deleted; create it again once it is gone`
        : `cluster "${request.name}" already exists`,
    );
  }
  const id = ctx.newId();
  const cluster: Cluster = {
    id,
    name: request.name,
    ...(request.description === undefined ? {} : { description: request.description }),
    provider: request.provider,
    clusterReleaseID: release.id,
    clusterReleaseName: release.name,
    kubernetesVersion: release.kubernetesVersion,
    controlPlaneConfig: {
      replicas,
      nodeNamePrefix: request.controlPlaneConfig.nodeNamePrefix ?? `${request.name}-cp`.slice(0, 50),
    },
    network: { ...network },
    ...(request.nico === undefined ? {} : { nico: request.nico }),
    ...(request.infra === undefined ? {} : { infra: request.infra }),
    labels: request.labels ?? {},
    status: {
      phase: "Provisioning",
      message: `provisioning ${replicas} control-plane ${plural(replicas, "machine")}`,
      controlPlaneReady: false,
      controlPlaneEndpoint: tenantEndpoint(request.name, id),
      kubeconfigSecret: { namespace: ctx.clustersNamespace, name: `${request.name}-kubeconfig` },
    },
    createdAt: iso(ctx.now),
    updatedAt: iso(ctx.now),
  };
  state.clusters[id] = { cluster, createdMs: ctx.now, kubeconfigSecret: "none" };
  const payload = cluster.nico !== undefined ? { nico: cluster.nico } : { infra: cluster.infra as InfraPayload };
  addPool(state, ctx, {
    name: CONTROL_PLANE_POOL,
    clusterID: id,
    nodeNamePrefix: cluster.controlPlaneConfig.nodeNamePrefix,
    desiredNodeCount: replicas,
    role: "control-plane",
    managed: true,
    payload,
    labels: {},
    taints: [{ key: "node-role.kubernetes.io/control-plane", effect: "NoSchedule" }],
  });
  return cluster;
}

export function getClusterRecord(state: EmulatorState, id: string): ClusterRecord {
  const record = state.clusters[id];
  if (record === undefined) throw notFound(`cluster ${id} not found`);
  return record;
}

export function patchCluster(state: EmulatorState, id: string, patch: unknown, ctx: ControllerContext): Cluster {
  const record = getClusterRecord(state, id);
  const { cluster } = record;
  checkPatchKeys(patch, CLUSTER_IMMUTABLE_FIELDS, CLUSTER_READ_ONLY_FIELDS, "cluster", cluster);
  const valid = validate(ClusterPatchSchema, patch, "cluster patch");
  if (cluster.status.phase === "Deleting") throw conflict(`cluster "${cluster.name}" is being deleted`);

  const spec = {
    description: cluster.description,
    controlPlaneConfig: cluster.controlPlaneConfig,
    labels: cluster.labels,
  };
  const next = applyMergePatch(spec, named(valid, ["description", "controlPlaneConfig", "labels"])) as {
    description?: string;
    controlPlaneConfig?: Cluster["controlPlaneConfig"];
    labels?: Record<string, string>;
  };

  let release: ClusterRelease | undefined;
  if (valid.clusterReleaseID !== undefined || valid.clusterReleaseName !== undefined) {
    release = resolveClusterRelease(
      state,
      valid.clusterReleaseID !== undefined
        ? {
            clusterReleaseID: valid.clusterReleaseID,
            ...(valid.clusterReleaseName ? { clusterReleaseName: valid.clusterReleaseName } : {}),
          }
        : { clusterReleaseName: valid.clusterReleaseName as string },
    );
  }

  if (release !== undefined && release.id !== cluster.clusterReleaseID) checkUpgrade(state, cluster, release);

  const controlPlaneConfig = {
    replicas: next.controlPlaneConfig?.replicas ?? cluster.controlPlaneConfig.replicas,
    nodeNamePrefix: next.controlPlaneConfig?.nodeNamePrefix ?? cluster.controlPlaneConfig.nodeNamePrefix,
  };
  const managed = poolsOf(state, id).find((pool) => pool.managed && pool.deletingSinceMs === undefined);
  if (controlPlaneConfig.replicas !== cluster.controlPlaneConfig.replicas && managed !== undefined) {
    checkCapacity(state, cluster, managed, controlPlaneConfig.replicas, "scale the control plane to");
  }
  if (controlPlaneConfig.nodeNamePrefix !== cluster.controlPlaneConfig.nodeNamePrefix) {
    throw invalid("controlPlaneConfig.nodeNamePrefix is immutable once control-plane nodes exist", [
      { field: "controlPlaneConfig.nodeNamePrefix", message: "is immutable" },
    ]);
  }

  // Everything is checked: apply.
  if (next.description === undefined) delete cluster.description;
  else cluster.description = next.description;
  cluster.labels = next.labels ?? {};
  if (release !== undefined) {
    cluster.clusterReleaseID = release.id;
    cluster.clusterReleaseName = release.name;
    cluster.kubernetesVersion = release.kubernetesVersion;
  }
  if (managed !== undefined && controlPlaneConfig.replicas !== cluster.controlPlaneConfig.replicas) {
    scalePool(managed, controlPlaneConfig.replicas, ctx.now);
  }
  cluster.controlPlaneConfig = controlPlaneConfig;
  cluster.updatedAt = iso(ctx.now);
  return cluster;
}

/** `v1.31.4` → [1, 31, 4]; the API only accepts versions of that form. */
function parseVersion(version: string): [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = version
    .replace(/^v/, "")
    .split(".")
    .map((part) => Number.parseInt(part, 10));
  return [major, minor, patch];
}

function compareVersions(a: string, b: string): number {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

const minorOf = (version: string) => {
  const [major, minor] = parseVersion(version);
  return `v${major}.${minor}`;
};

/** How many minor versions older than the control plane a worker's kubelet may be (Kubernetes' skew policy). */
const KUBELET_SKEW = 3;

/**
 * A control-plane release change, as Cluster API's control plane allows it: never a
 * downgrade, one minor version at a time, and never leaving a node pool further behind
 * than the kubelet skew policy allows.
 */
function checkUpgrade(state: EmulatorState, cluster: Cluster, release: ClusterRelease): void {
  const from = cluster.kubernetesVersion;
  const to = release.kubernetesVersion;
  const change = `cannot move cluster "${cluster.name}" from Kubernetes ${from} (cluster release "${cluster.clusterReleaseName}") to ${to} (cluster release "${release.name}")`;
  const [fromMajor, fromMinor] = parseVersion(from);
  const [toMajor, toMinor] = parseVersion(to);
  if (compareVersions(to, from) < 0) {
    throw invalid(`${change}: a control plane is never downgraded; pick a release of ${from} or newer`, [
      { field: "clusterReleaseName", message: `is Kubernetes ${to}, older than the cluster's ${from}` },
    ]);
  }
  if (toMajor !== fromMajor || toMinor > fromMinor + 1) {
    const step = `v${fromMajor}.${fromMinor + 1}`;
    throw invalid(
      `${change}: a control plane is upgraded one minor version at a time; move to a ${step} release first`,
      [{ field: "clusterReleaseName", message: `skips minor versions: ${minorOf(from)} → ${minorOf(to)}` }],
    );
  }
  for (const pool of poolsOf(state, cluster.id)) {
    const version = poolVersion(state, pool);
    if (version === undefined || pool.deletingSinceMs !== undefined) continue;
    const [major, minor] = parseVersion(version);
    if (major === toMajor && toMinor - minor > KUBELET_SKEW) {
      throw invalid(
        `${change}: node pool "${pool.pool.name}" runs ${version}, and a kubelet may be at most ${KUBELET_SKEW} minor versions older than its control plane; upgrade the node pool first`,
        [{ field: "clusterReleaseName", message: `leaves node pool "${pool.pool.name}" (${version}) too far behind` }],
      );
    }
  }
}

/** The Kubernetes version a pool's release pins, when it names one. */
function poolVersion(state: EmulatorState, record: NodePoolRecord): string | undefined {
  const name = record.pool.nodePoolReleaseName;
  if (name === undefined) return undefined;
  return Object.values(state.nodePoolReleases).find((release) => release.name === name)?.kubernetesVersion;
}

/** A node pool release a pool of this cluster may take: never newer than the control plane, nor too far behind it. */
function checkPoolRelease(cluster: Cluster, release: NodePoolRelease, pool: string): void {
  const version = release.kubernetesVersion;
  const controlPlane = cluster.kubernetesVersion;
  const subject = `node pool "${pool}" cannot take node pool release "${release.name}" (Kubernetes ${version})`;
  if (compareVersions(version, controlPlane) > 0) {
    throw invalid(
      `${subject}: it is newer than cluster "${cluster.name}"'s control plane (${controlPlane}), and workers are never newer than their control plane; upgrade the cluster first`,
      [
        {
          field: "nodePoolReleaseName",
          message: `is Kubernetes ${version}, newer than the control plane's ${controlPlane}`,
        },
      ],
    );
  }
  const [major, minor] = parseVersion(version);
  const [cpMajor, cpMinor] = parseVersion(controlPlane);
  if (major !== cpMajor || cpMinor - minor > KUBELET_SKEW) {
    throw invalid(
      `${subject}: it is more than ${KUBELET_SKEW} minor versions older than cluster "${cluster.name}"'s control plane (${controlPlane})`,
      [
        {
          field: "nodePoolReleaseName",
          message: `is Kubernetes ${version}, too old for the control plane's ${controlPlane}`,
        },
      ],
    );
  }
}

export function deleteCluster(state: EmulatorState, id: string, ctx: ControllerContext): Cluster {
  const record = getClusterRecord(state, id);
  if (record.deletingSinceMs !== undefined) return record.cluster;
  record.deletingSinceMs = ctx.now;
  record.cluster.status = {
    ...record.cluster.status,
    phase: "Deleting",
    message: "draining node pools and removing machines",
  };
  record.cluster.updatedAt = iso(ctx.now);
  for (const pool of poolsOf(state, id)) startPoolDeletion(pool, ctx.now);
  return record.cluster;
}

// ---------------------------------------------------------------------------------------
// Node pools

interface NewPool {
  name: string;
  clusterID: string;
  nodeNamePrefix: string;
  desiredNodeCount: number;
  role: NodePool["role"];
  managed: boolean;
  payload: { nico: NicoPayload } | { infra: InfraPayload };
  nodePoolReleaseName?: string;
  labels: Record<string, string>;
  taints: NodePool["taints"];
}

function addPool(state: EmulatorState, ctx: ControllerContext, spec: NewPool): NodePoolRecord {
  const { managed, payload, ...fields } = spec;
  const record: NodePoolRecord = {
    pool: { id: ctx.newId(), ...fields, ...payload, createdAt: iso(ctx.now), updatedAt: iso(ctx.now) },
    managed,
    nodes: [],
    nextIndex: 0,
    hasBeenReady: spec.desiredNodeCount === 0,
  };
  scalePool(record, spec.desiredNodeCount, ctx.now);
  state.nodePools[record.pool.id] = record;
  return record;
}

/** Records the desired count: adds Pending nodes, or removes Pending ones (newest first) — never others. */
function scalePool(record: NodePoolRecord, desired: number, now: number): void {
  record.pool.desiredNodeCount = desired;
  record.pool.updatedAt = iso(now);
  while (record.nodes.length < desired) {
    record.nodes.push({ name: `${record.pool.nodeNamePrefix}-${record.nextIndex++}`, state: "Pending", since: now });
  }
  for (let i = record.nodes.length - 1; i >= 0 && record.nodes.length > desired; i--) {
    if (record.nodes[i]?.state === "Pending") record.nodes.splice(i, 1);
  }
}

function startPoolDeletion(record: NodePoolRecord, now: number): void {
  if (record.deletingSinceMs !== undefined) return;
  record.deletingSinceMs = now;
  record.pool.updatedAt = iso(now);
  record.nodes = record.nodes
    .filter((node) => node.state !== "Pending")
    .map((node): NodeRecord => (node.state === "Draining" ? node : { ...node, state: "Draining", since: now }));
}

/** Refuses a count the cluster's pod CIDR has no room for, in the controller's words. */
function checkCapacity(
  state: EmulatorState,
  cluster: Cluster,
  record: NodePoolRecord | undefined,
  desired: number,
  action: string,
): void {
  const { podCIDR, nodeCIDRMaskSize } = cluster.network;
  const capacity = podCidrCapacity(podCIDR, nodeCIDRMaskSize);
  const staying = record === undefined ? 0 : record.nodes.filter((node) => node.state !== "Pending").length;
  const wanted = Math.max(desired, staying);
  let controlPlane = 0;
  let others = 0;
  for (const pool of poolsOf(state, cluster.id)) {
    if (pool === record) continue;
    if (pool.pool.role === "control-plane") controlPlane += poolUsage(pool);
    else others += poolUsage(pool);
  }
  if (wanted + controlPlane + others <= capacity) return;
  const uses = [`control plane uses ${controlPlane}`];
  if (others > 0) uses.push(`other node pools use ${others}`);
  const room = Math.max(0, capacity - controlPlane - others);
  throw invalid(
    `cannot ${action} ${desired} ${plural(desired, "node")}: pod CIDR ${podCIDR} has room for ${capacity} ${plural(capacity, "node")} with /${nodeCIDRMaskSize} per node (${uses.join(", ")})`,
    [{ field: "desiredNodeCount", message: `at most ${room} fit in pod CIDR ${podCIDR}` }],
  );
}

export function createNodePool(state: EmulatorState, body: unknown, ctx: ControllerContext): NodePool {
  const request = validate(CreateNodePoolRequestSchema, body, "CreateNodePoolRequest");
  const record = state.clusters[request.clusterID];
  if (record === undefined) throw notFound(`cluster ${request.clusterID} not found`);
  const { cluster } = record;
  if (record.deletingSinceMs !== undefined) {
    throw conflict(`cluster "${cluster.name}" is being deleted; no node pools can be added to it`);
  }
  const pools = poolsOf(state, cluster.id);
  if (pools.some((pool) => pool.pool.name === request.name)) {
    throw conflict(`node pool "${request.name}" already exists in cluster "${cluster.name}"`);
  }
  const sharing = pools.find((pool) => pool.pool.nodeNamePrefix === request.nodeNamePrefix);
  if (sharing !== undefined) {
    throw conflict(
      `nodeNamePrefix "${request.nodeNamePrefix}" is already used by node pool "${sharing.pool.name}" of cluster "${cluster.name}": node names (<nodeNamePrefix>-<n>) must be unique within a cluster, so each pool needs a prefix of its own`,
    );
  }
  const wants = request.nico !== undefined ? "nico" : "infra";
  const takes = cluster.nico !== undefined ? "nico" : "infra";
  if (wants !== takes) {
    throw invalid(
      `a node pool carries the same kind of payload as its cluster: cluster "${cluster.name}" has a ${takes} payload, and this node pool ${wants === "nico" ? "a nico" : "an infra"} payload`,
      [
        {
          field: wants,
          message: `cluster "${cluster.name}" takes ${takes === "nico" ? "a nico" : "an infra"} payload`,
        },
      ],
    );
  }
  if (request.nodePoolReleaseName !== undefined) {
    checkPoolRelease(cluster, nodePoolReleaseNamed(state, request.nodePoolReleaseName), request.name);
  }
  checkCapacity(state, cluster, undefined, request.desiredNodeCount, `create node pool "${request.name}" with`);
  const created = addPool(state, ctx, {
    name: request.name,
    clusterID: cluster.id,
    nodeNamePrefix: request.nodeNamePrefix,
    desiredNodeCount: request.desiredNodeCount,
    role: request.role,
    managed: false,
    payload: request.nico !== undefined ? { nico: request.nico } : { infra: request.infra as InfraPayload },
    ...(request.nodePoolReleaseName === undefined ? {} : { nodePoolReleaseName: request.nodePoolReleaseName }),
    labels: request.labels ?? {},
    taints: request.taints ?? [],
  });
  return renderNodePool(state, created);
}

function nodePoolReleaseNamed(state: EmulatorState, name: string): NodePoolRelease {
  const release = Object.values(state.nodePoolReleases).find((candidate) => candidate.name === name);
  if (release !== undefined) return release;
  throw invalid(`node pool release "${name}" does not exist`, [
    { field: "nodePoolReleaseName", message: `node pool release "${name}" not found` },
  ]);
}

export function getNodePoolRecord(state: EmulatorState, id: string): NodePoolRecord {
  const record = state.nodePools[id];
  if (record === undefined) throw notFound(`node pool ${id} not found`);
  return record;
}

export function patchNodePool(state: EmulatorState, id: string, patch: unknown, ctx: ControllerContext): NodePool {
  const record = getNodePoolRecord(state, id);
  const cluster = getClusterRecord(state, record.pool.clusterID).cluster;
  checkPatchKeys(patch, NODEPOOL_IMMUTABLE_FIELDS, [...NODEPOOL_READ_ONLY_FIELDS], "node pool", record.pool);
  const valid = validate(NodePoolPatchSchema, patch, "node pool patch");
  const name = record.pool.name;
  if (record.deletingSinceMs !== undefined) throw conflict(`node pool "${name}" is being deleted`);
  if (valid.desiredNodeCount !== undefined && valid.desiredNodeCount !== record.pool.desiredNodeCount) {
    if (record.managed) {
      throw invalid(
        `node pool "${name}" is the control plane of cluster "${cluster.name}"; change the cluster's controlPlaneConfig.replicas instead`,
        [{ field: "desiredNodeCount", message: "follows the cluster's controlPlaneConfig.replicas" }],
      );
    }
    if (valid.desiredNodeCount > record.pool.desiredNodeCount) {
      checkCapacity(state, cluster, record, valid.desiredNodeCount, `scale node pool "${name}" to`);
    }
  }
  if (valid.nodePoolReleaseName != null && valid.nodePoolReleaseName !== record.pool.nodePoolReleaseName) {
    checkPoolRelease(cluster, nodePoolReleaseNamed(state, valid.nodePoolReleaseName), name);
  }
  const next = applyMergePatch(
    { nodePoolReleaseName: record.pool.nodePoolReleaseName, labels: record.pool.labels, taints: record.pool.taints },
    named(valid, ["nodePoolReleaseName", "labels", "taints"]),
  ) as { nodePoolReleaseName?: string; labels?: Record<string, string>; taints?: NodePool["taints"] };
  if (next.nodePoolReleaseName === undefined) delete record.pool.nodePoolReleaseName;
  else record.pool.nodePoolReleaseName = next.nodePoolReleaseName;
  record.pool.labels = next.labels ?? {};
  record.pool.taints = next.taints ?? [];
  if (valid.desiredNodeCount !== undefined) scalePool(record, valid.desiredNodeCount, ctx.now);
  record.pool.updatedAt = iso(ctx.now);
  return renderNodePool(state, record);
}

export function deleteNodePool(state: EmulatorState, id: string, ctx: ControllerContext): NodePool {
  const record = getNodePoolRecord(state, id);
  const cluster = getClusterRecord(state, record.pool.clusterID).cluster;
  if (record.deletingSinceMs !== undefined) return renderNodePool(state, record);
  const name = record.pool.name;
  if (record.pool.role === "control-plane") {
    if (ctx.controlPlaneController && record.managed) {
      throw conflict(
        `node pool "${name}" is managed by the control-plane controller from cluster "${cluster.name}"'s controlPlaneConfig; change controlPlaneConfig.replicas or delete the cluster instead`,
      );
    }
    const joined = (pool: NodePoolRecord) =>
      pool.pool.role === "control-plane" &&
      pool.deletingSinceMs === undefined &&
      pool.nodes.some((node) => node.state === "Running");
    const otherJoined = poolsOf(state, cluster.id).some((pool) => pool !== record && joined(pool));
    if (!ctx.controlPlaneController && joined(record) && !otherJoined) {
      throw conflict(
        `node pool "${name}" is the last joined control-plane pool of cluster "${cluster.name}"; delete the cluster instead`,
      );
    }
  }
  startPoolDeletion(record, ctx.now);
  return renderNodePool(state, record);
}
