import { UserError } from "@nodekit/errors";
import {
  NODEPOOL_IMMUTABLE_FIELDS,
  NODEPOOL_READ_ONLY_FIELDS,
  type NodePool,
  type NvkeClient,
  nvkeApiErrorCodes,
  type Requirement,
} from "@nodekit/nvke-api";
import { errorCodes } from "../errors.ts";
import { type Found, findEach, listClusters } from "./clusters.ts";
import { forEachPage } from "./paging.ts";
import { apiSchemas, type FieldFill, readPatch, readRequestFile } from "./requests.ts";
import { quotedList, selected } from "./select.ts";
import { unlessNotFound, type WaitFor, waitForObject, watchList } from "./watch.ts";

/**
 * Validates the CreateNodePoolRequest in `file` (one document: a file with several is
 * refused) and sends it. Provisioning is asynchronous.
 */
export async function createNodePool(options: {
  client: NvkeClient;
  file: string;
  /** The cluster by name: fills the request's clusterID (one request to look it up). */
  cluster?: string | undefined;
}): Promise<NodePool> {
  const { CreateNodePoolRequestSchema } = await apiSchemas();
  let fill: FieldFill | undefined;
  if (options.cluster !== undefined) {
    const cluster = await options.client.getClusterByName(options.cluster);
    fill = {
      field: "clusterID",
      value: cluster.id,
      flag: `--cluster ${options.cluster}`,
      describe: `cluster "${cluster.name}" has ID ${cluster.id}`,
    };
  }
  const request = await readRequestFile(CreateNodePoolRequestSchema, options.file, "CreateNodePoolRequest", fill);
  return options.client.createNodePool(request);
}

/**
 * The pools of a cluster (by name) whose labels match `selector` (all without one), handed
 * over a page at a time. Returns how many there were.
 */
export async function listNodePools(options: {
  client: NvkeClient;
  cluster: string;
  selector?: readonly Requirement[] | undefined;
  onPage: (pools: NodePool[]) => Promise<void> | void;
}): Promise<number> {
  const cluster = await options.client.getClusterByName(options.cluster);
  return forEachPage(async (page) => {
    const list = await options.client.listNodePoolsPage({ clusterID: cluster.id, ...page });
    return { ...list, items: selected(list.items, options.selector) };
  }, options.onPage);
}

/**
 * One site's part of `get nodepools --all-sites`: the pools (whose labels match `selector`) of
 * the cluster named `cluster`, none when the site has no cluster of that name; without
 * `cluster`, the pools of every cluster of the site, cluster by cluster.
 */
export async function nodePoolsOfSite(options: {
  client: NvkeClient;
  cluster?: string | undefined;
  selector?: readonly Requirement[] | undefined;
}): Promise<NodePool[]> {
  const { client } = options;
  const clusters: Array<{ id: string }> = [];
  if (options.cluster === undefined) {
    await listClusters({ client, onPage: (page) => void clusters.push(...page) });
  } else {
    const cluster = await client.findClusterByName(options.cluster);
    if (cluster !== undefined) clusters.push(cluster);
  }
  const pools: NodePool[] = [];
  for (const cluster of clusters) {
    await forEachPage(
      async (page) => {
        const list = await client.listNodePoolsPage({ clusterID: cluster.id, ...page });
        return { ...list, items: selected(list.items, options.selector) };
      },
      (page) => void pools.push(...page),
    );
  }
  return pools;
}

/** The pools with these names in this cluster (the cluster is looked up once), and the names that have none. */
export async function getNodePools(options: {
  client: NvkeClient;
  cluster: string;
  names: readonly string[];
}): Promise<Found<NodePool>> {
  const cluster = await options.client.getClusterByName(options.cluster);
  return findEach(options.names, (name) => options.client.findNodePoolByName(cluster.id, name));
}

/** NODEPOOL_NOT_FOUND (NotFound) for each of these names, in one error. */
export function nodePoolsNotFound(missing: readonly string[], cluster: string): UserError {
  const [only] = missing;
  return new UserError(
    nvkeApiErrorCodes.NODEPOOL_NOT_FOUND,
    `${missing.length === 1 ? `node pool ${JSON.stringify(only)}` : `node pools ${quotedList(missing)}`} not found in cluster ${JSON.stringify(cluster)}`,
    { facts: { nodePool: only ?? "", missing: missing.join(", "), cluster } },
  );
}

/** `get nodepools -w`: the cluster's pools, then each again when it changes, until `timeoutMs` (or interrupted). */
export async function watchNodePools(options: {
  client: NvkeClient;
  cluster: string;
  selector?: readonly Requirement[] | undefined;
  intervalMs: number;
  timeoutMs?: number | undefined;
  onChange: (pools: NodePool[]) => Promise<void> | void;
}): Promise<void> {
  const cluster = await options.client.getClusterByName(options.cluster);
  return watchList({
    fetchAll: (onPage) =>
      forEachPage(async (page) => {
        const list = await options.client.listNodePoolsPage({ clusterID: cluster.id, ...page });
        return { ...list, items: selected(list.items, options.selector) };
      }, onPage),
    key: (pool) => pool.id,
    signature: poolSignature,
    onChange: options.onChange,
    intervalMs: options.intervalMs,
    timeoutMs: options.timeoutMs,
  });
}

/** What changes when a pool does: its spec (updatedAt), phase, message and node counts. */
const poolSignature = (pool: NodePool) =>
  [pool.updatedAt, pool.status.phase, pool.status.message ?? "", pool.status.readyNodes, pool.status.pendingNodes].join(
    "\u0000",
  );

export interface WaitForNodePoolOptions extends WaitFor<NodePool> {
  client: NvkeClient;
  /** The cluster's name, for messages. */
  cluster: string;
  pool: NodePool;
}

/**
 * Polls a node pool until it is Ready (or gone), as waitForCluster does for a cluster: a
 * pool that turns Failed ends it with NODEPOOL_FAILED, the deadline with WAIT_TIMEOUT.
 * Returns the last state seen (undefined when gone).
 */
export function waitForNodePool(options: WaitForNodePoolOptions): Promise<NodePool | undefined> {
  const quoted = JSON.stringify(options.pool.name);
  return waitForObject({
    ...options,
    first: async () => options.pool,
    next: (last) => unlessNotFound(options.client.getNodePool(last.id)),
    signature: poolSignature,
    missing: () =>
      new UserError(
        nvkeApiErrorCodes.NODEPOOL_NOT_FOUND,
        `node pool ${quoted} disappeared while waiting for it to become Ready`,
        {
          why: "someone deleted it",
          facts: { nodePool: options.pool.name, cluster: options.cluster },
        },
      ),
    stuck: (pool) => {
      if (pool.status.phase === "Failed") {
        return new UserError(
          errorCodes.NODEPOOL_FAILED,
          `node pool ${quoted} failed: ${pool.status.message ?? "the controller gave no reason"}`,
          { next: [`see its state with: nvkectl get nodepools ${pool.name} --cluster ${options.cluster} -o yaml`] },
        );
      }
      if (pool.status.phase === "Deleting") {
        return new UserError(
          errorCodes.NODEPOOL_DELETING,
          `node pool ${quoted} is being deleted; it will not become Ready`,
          {},
        );
      }
      return undefined;
    },
    timedOut: (pool) => {
      const doing = options.until === "Ready" ? "provisioning" : "deleting";
      return new UserError(
        errorCodes.WAIT_TIMEOUT,
        `node pool ${quoted} did not finish ${doing} in ${Math.round(options.timeoutMs / 1000)}s: it is ${pool.status.phase} (${pool.status.readyNodes} of ${pool.desiredNodeCount} nodes running)`,
        {
          why: `nvkectl waited for it ${options.until === "Ready" ? "to become Ready" : "to be deleted"}; the controller keeps working on it`,
          next: [
            `check on it with: nvkectl get nodepools ${pool.name} --cluster ${options.cluster}${options.until === "Ready" ? " -w" : ""}`,
            "or wait longer with --timeout",
          ],
        },
      );
    },
  });
}

/** The pool of this name in this cluster (pool names are unique within a cluster, not across). */
async function getNodePool(options: { client: NvkeClient; cluster: string; name: string }): Promise<NodePool> {
  const cluster = await options.client.getClusterByName(options.cluster);
  const pool = await options.client.findNodePoolByName(cluster.id, options.name);
  if (pool !== undefined) return pool;
  throw new UserError(
    nvkeApiErrorCodes.NODEPOOL_NOT_FOUND,
    `node pool ${JSON.stringify(options.name)} not found in cluster ${JSON.stringify(options.cluster)}`,
    { facts: { nodePool: options.name, cluster: options.cluster } },
  );
}

export interface ScaleResult {
  pool: NodePool;
  /** desiredNodeCount before the change. */
  from: number;
  /** desiredNodeCount the controller recorded. */
  to: number;
}

/**
 * Changes only desiredNodeCount (NV-13): `PATCH {"desiredNodeCount": N}`. The count is
 * checked before anything is sent; the controller's refusal (a pod CIDR without room for
 * more nodes, …) comes back verbatim as CONTROLLER_REJECTED (Rejected).
 */
export async function scaleNodePool(options: {
  client: NvkeClient;
  cluster: string;
  name: string;
  replicas: number;
}): Promise<ScaleResult> {
  const { DesiredNodeCountSchema } = await apiSchemas();
  const checked = DesiredNodeCountSchema.safeParse(options.replicas);
  if (!checked.success) {
    throw new UserError(
      errorCodes.REPLICAS_INVALID,
      `--replicas ${options.replicas} ${checked.error.issues[0]?.message ?? "is not valid"}`,
      {
        next: "give the node count the pool should have: a whole number from 0 to 5000",
      },
    );
  }
  const current = await getNodePool(options);
  const pool = await options.client.scaleNodePool(current.id, checked.data);
  return { pool, from: current.desiredNodeCount, to: pool.desiredNodeCount };
}

/** A JSON merge patch for a pool; only the fields in it change, `null` clears one. */
export async function patchNodePool(options: {
  client: NvkeClient;
  cluster: string;
  name: string;
  patch?: string | undefined;
  patchFile?: string | undefined;
}): Promise<NodePool> {
  const { NodePoolPatchSchema } = await apiSchemas();
  const patch = await readPatch({
    schema: NodePoolPatchSchema,
    patch: options.patch,
    patchFile: options.patchFile,
    immutable: NODEPOOL_IMMUTABLE_FIELDS,
    readOnly: NODEPOOL_READ_ONLY_FIELDS,
    kind: "node pool",
  });
  const pool = await getNodePool(options);
  return options.client.patchNodePool(pool.id, patch);
}

/**
 * Starts the asynchronous, draining deletion of each named pool of the cluster; the
 * controller's refusal comes back verbatim. Returns the pools as the controller accepted
 * them (Deleting) and the names that name none.
 */
export async function deleteNodePools(options: {
  client: NvkeClient;
  cluster: string;
  names: readonly string[];
}): Promise<Found<NodePool>> {
  const { found, missing } = await getNodePools(options);
  const deleted: NodePool[] = [];
  for (const pool of found) deleted.push(await options.client.deleteNodePool(pool.id));
  return { found: deleted, missing };
}
