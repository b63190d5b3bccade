import { UserError } from "@nodekit/errors";
import {
  CLUSTER_IMMUTABLE_FIELDS,
  CLUSTER_READ_ONLY_FIELDS,
  type Cluster,
  type NvkeClient,
  nvkeApiErrorCodes,
  type Requirement,
} from "@nodekit/nvke-api";
import { errorCodes } from "../errors.ts";
import { forEachPage } from "./paging.ts";
import { apiSchemas, readPatch, readRequestFile } from "./requests.ts";
import { quotedList, selected } from "./select.ts";
import { unlessNotFound, type WaitFor, waitForObject, watchList } from "./watch.ts";

/** Validates the CreateClusterRequest in `file` and sends it; the controller provisions asynchronously. */
export async function createCluster(options: { client: NvkeClient; file: string }): Promise<Cluster> {
  const { CreateClusterRequestSchema } = await apiSchemas();
  const request = await readRequestFile(CreateClusterRequestSchema, options.file, "CreateClusterRequest");
  return options.client.createCluster(request);
}

/**
 * Every cluster (whose labels match `selector`, when given), handed to `onPage` one page at
 * a time as the pages arrive, so that even ten thousand clusters are never all in memory.
 * Returns how many there were.
 */
export async function listClusters(options: {
  client: NvkeClient;
  onPage: (clusters: Cluster[]) => Promise<void> | void;
  selector?: readonly Requirement[] | undefined;
  pageSize?: number;
}): Promise<number> {
  const limit = options.pageSize === undefined ? {} : { limit: options.pageSize };
  return forEachPage(async (page) => {
    const list = await options.client.listClustersPage({ ...limit, ...page });
    return { ...list, items: selected(list.items, options.selector) };
  }, options.onPage);
}

export interface Found<T> {
  /** The objects found, in the order their names were given (each name once). */
  found: T[];
  /** The names that name nothing. */
  missing: string[];
}

/** What `find` finds of these names (each name once, in turn), and the names it finds nothing for. */
export async function findEach<T>(
  names: readonly string[],
  find: (name: string) => Promise<T | undefined>,
): Promise<Found<T>> {
  const result: Found<T> = { found: [], missing: [] };
  for (const name of new Set(names)) {
    const object = await find(name);
    if (object === undefined) result.missing.push(name);
    else result.found.push(object);
  }
  return result;
}

/** The clusters with these names, one request each, and the names that have none. */
export function getClusters(options: { client: NvkeClient; names: readonly string[] }): Promise<Found<Cluster>> {
  return findEach(options.names, (name) => options.client.findClusterByName(name));
}

/** CLUSTER_NOT_FOUND (NotFound) for each of these names, in one error. */
export function clustersNotFound(missing: readonly string[], baseUrl: string): UserError {
  const [only] = missing;
  return new UserError(
    nvkeApiErrorCodes.CLUSTER_NOT_FOUND,
    missing.length === 1 ? `cluster ${JSON.stringify(only)} not found` : `clusters ${quotedList(missing)} not found`,
    {
      why: `the NVKE controller at ${baseUrl} has no cluster with ${missing.length === 1 ? "that name" : "those names"}`,
      facts: { cluster: only ?? "", missing: missing.join(", ") },
    },
  );
}

/**
 * `get clusters -w`: the list (whose labels match `selector`), then each cluster again
 * whenever its phase, message or anything else the controller updates changes, until
 * `timeoutMs` passes or, without it, until interrupted.
 */
export function watchClusters(options: {
  client: NvkeClient;
  selector?: readonly Requirement[] | undefined;
  intervalMs: number;
  timeoutMs?: number | undefined;
  onChange: (clusters: Cluster[]) => Promise<void> | void;
}): Promise<void> {
  return watchList({
    fetchAll: (onPage) => listClusters({ client: options.client, selector: options.selector, onPage }),
    key: (cluster) => cluster.id,
    signature: (cluster) => `${cluster.updatedAt}\u0000${cluster.status.phase}\u0000${cluster.status.message ?? ""}`,
    onChange: options.onChange,
    intervalMs: options.intervalMs,
    timeoutMs: options.timeoutMs,
  });
}

/** Which cluster to wait for (the wait tells onChange when its phase or status message changes). */
export interface WaitOptions extends WaitFor<Cluster> {
  client: NvkeClient;
  name: string;
  /** The cluster's ID when known (after create or delete): then the name is not looked up. */
  id?: string;
}

/**
 * Polls the cluster until it is Ready (or gone). A cluster that turns Failed ends the
 * wait with CLUSTER_FAILED (CheckFailed) and the controller's message; the deadline with
 * WAIT_TIMEOUT (Unreachable). Returns the last state seen (undefined when gone).
 */
export function waitForCluster(options: WaitOptions): Promise<Cluster | undefined> {
  const quoted = JSON.stringify(options.name);
  return waitForObject({
    ...options,
    first: () =>
      options.id === undefined
        ? options.client.getClusterByName(options.name)
        : unlessNotFound(options.client.getCluster(options.id)),
    next: (last) => unlessNotFound(options.client.getCluster(last.id)),
    signature: (cluster) => `${cluster.status.phase}\u0000${cluster.status.message ?? ""}`,
    missing: (later) =>
      later
        ? new UserError(
            nvkeApiErrorCodes.CLUSTER_NOT_FOUND,
            `cluster ${quoted} disappeared while waiting for it to become Ready`,
            { why: "someone deleted it" },
          )
        : new UserError(nvkeApiErrorCodes.CLUSTER_NOT_FOUND, `cluster ${quoted} not found`, {}),
    stuck: (cluster) => {
      if (cluster.status.phase === "Failed") {
        return new UserError(
          errorCodes.CLUSTER_FAILED,
          `cluster ${JSON.stringify(cluster.name)} failed: ${cluster.status.message ?? "the controller gave no reason"}`,
          {
            next: [
              `see its state with: nvkectl get clusters ${cluster.name} -o yaml`,
              `delete it with: nvkectl delete cluster ${cluster.name}`,
            ],
          },
        );
      }
      if (cluster.status.phase === "Deleting") {
        return new UserError(
          errorCodes.CLUSTER_DELETING,
          `cluster ${JSON.stringify(cluster.name)} is being deleted; it will not become Ready`,
          {},
        );
      }
      return undefined;
    },
    timedOut: (cluster) => waitTimeout(cluster, options),
  });
}

function waitTimeout(cluster: Cluster, options: WaitOptions): UserError {
  const target = options.until === "Ready" ? "to become Ready" : "to be deleted";
  return new UserError(
    errorCodes.WAIT_TIMEOUT,
    `cluster ${JSON.stringify(cluster.name)} did not finish ${options.until === "Ready" ? "provisioning" : "deleting"} in ${Math.round(options.timeoutMs / 1000)}s: it is ${cluster.status.phase}${cluster.status.message ? ` (${cluster.status.message})` : ""}`,
    {
      why: `nvkectl waited for it ${target}; the controller keeps working on it`,
      next: [
        options.until === "Ready"
          ? `keep watching with: nvkectl get clusters ${cluster.name} -w`
          : `check on it with: nvkectl get clusters ${cluster.name}`,
        "or wait longer with --timeout",
      ],
    },
  );
}

/**
 * Sends a JSON merge patch (RFC 7396): only the fields in it change; `null` clears a
 * field. The patch is checked before it is sent; immutable fields are refused here.
 */
export async function patchCluster(options: {
  client: NvkeClient;
  name: string;
  patch?: string | undefined;
  patchFile?: string | undefined;
}): Promise<Cluster> {
  const { ClusterPatchSchema } = await apiSchemas();
  const patch = await readPatch({
    schema: ClusterPatchSchema,
    patch: options.patch,
    patchFile: options.patchFile,
    immutable: CLUSTER_IMMUTABLE_FIELDS,
    readOnly: CLUSTER_READ_ONLY_FIELDS,
    kind: "cluster",
  });
  const cluster = await options.client.getClusterByName(options.name);
  return options.client.patchCluster(cluster.id, patch);
}

/**
 * Starts the asynchronous deletion of each named cluster; returns the clusters as the
 * controller accepted them (Deleting) and the names that name none (the caller decides
 * whether that is an error: --ignore-not-found).
 */
export async function deleteClusters(options: {
  client: NvkeClient;
  names: readonly string[];
}): Promise<Found<Cluster>> {
  const { found, missing } = await getClusters(options);
  const deleted: Cluster[] = [];
  for (const cluster of found) deleted.push(await options.client.deleteCluster(cluster.id));
  return { found: deleted, missing };
}
