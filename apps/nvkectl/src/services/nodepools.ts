import { UserError } from "@nodekit/errors";
import {
  CreateNodePoolRequestSchema,
  DesiredNodeCountSchema,
  NODEPOOL_IMMUTABLE_FIELDS,
  NODEPOOL_READ_ONLY_FIELDS,
  type NodePool,
  NodePoolPatchSchema,
  type NvkeClient,
  nvkeApiErrorCodes,
} from "@nodekit/nvke-api";
import { errorCodes } from "../errors.ts";
import { forEachPage } from "./paging.ts";
import { readPatch, readRequestFile } from "./requests.ts";

/**
 * Validates the CreateNodePoolRequest in `file` (one document: a file with several is
 * refused) and sends it. Provisioning is asynchronous.
 */
export async function createNodePool(options: { client: NvkeClient; file: string }): Promise<NodePool> {
  const request = await readRequestFile(CreateNodePoolRequestSchema, options.file, "CreateNodePoolRequest");
  return options.client.createNodePool(request);
}

/** The pools of a cluster (by name), handed over a page at a time. Returns how many there were. */
export async function listNodePools(options: {
  client: NvkeClient;
  cluster: string;
  onPage: (pools: NodePool[]) => Promise<void> | void;
}): Promise<number> {
  const cluster = await options.client.getClusterByName(options.cluster);
  return forEachPage((page) => options.client.listNodePoolsPage({ clusterID: cluster.id, ...page }), options.onPage);
}

/** The pool of this name in this cluster (pool names are unique within a cluster, not across). */
export async function getNodePool(options: { client: NvkeClient; cluster: string; name: string }): Promise<NodePool> {
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

/** Starts the asynchronous, draining deletion; the controller's refusal comes back verbatim. */
export async function deleteNodePool(options: {
  client: NvkeClient;
  cluster: string;
  name: string;
}): Promise<NodePool> {
  const pool = await getNodePool(options);
  return options.client.deleteNodePool(pool.id);
}
