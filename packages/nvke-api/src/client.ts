import { type Problem, UserError } from "@nodekit/errors";
import type { KyInstance } from "ky";
import type * as z from "zod";
import { errorCodes } from "./errors.ts";
import {
  type ApiErrorBody,
  ApiErrorBodySchema,
  type Cluster,
  ClusterListSchema,
  type ClusterPatch,
  type ClusterRelease,
  ClusterReleaseListSchema,
  ClusterReleaseSchema,
  ClusterSchema,
  type CreateClusterReleaseRequest,
  type CreateClusterRequest,
  type CreateMachineImageRequest,
  type CreateNodePoolReleaseRequest,
  type CreateNodePoolRequest,
  HealthSchema,
  type List,
  type MachineImage,
  MachineImageListSchema,
  MachineImageSchema,
  MERGE_PATCH_CONTENT_TYPE,
  type NodePool,
  NodePoolListSchema,
  type NodePoolPatch,
  type NodePoolRelease,
  NodePoolReleaseListSchema,
  NodePoolReleaseSchema,
  NodePoolSchema,
} from "./schemas.ts";

export interface NvkeClientOptions {
  /** The controller API, e.g. `http://10.0.0.5:30080` (a path prefix is kept: `https://gw/nvke/`). */
  baseUrl: string;
  /** The bearer token to send, or undefined to send none (auth off). Called before every request. */
  token?: () => Promise<string | undefined>;
  /** Called on a 401 before the one retry, so the caller can drop a cached token. */
  onUnauthorized?: () => Promise<void>;
  /** A fetch implementation (defaults to the global fetch). */
  fetch?: typeof globalThis.fetch;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
  /** Debug log: one line per request (method, path, status, time). Never carries a token. */
  log?: (line: string) => void;
}

/** Paging of a single list request. */
export interface PageOptions {
  /** Items per page (the controller's default is 500, its maximum 1000). */
  limit?: number;
  /** The `continue` of the previous page. */
  continue?: string;
}

export interface ListNodePoolsOptions extends PageOptions {
  /** Only the pools of this cluster. */
  clusterID?: string;
}

/** A merge patch as the user wrote it: the typed fields, or any JSON object (the controller judges it). */
export type MergePatch<T> = T | Readonly<Record<string, unknown>>;

export interface NvkeClient {
  readonly baseUrl: string;
  healthz(): Promise<{ status: "ok" }>;
  /** The OpenAPI 3.1 document at `/api/docs`. */
  openApi(): Promise<Record<string, unknown>>;

  /** Every cluster, fetched page by page as the iteration goes (one page in memory at a time). */
  listClusters(options?: Omit<PageOptions, "continue">): AsyncGenerator<Cluster>;
  listClustersPage(options?: PageOptions): Promise<List<Cluster>>;
  getCluster(id: string): Promise<Cluster>;
  /** The cluster with this name, or undefined. One request. */
  findClusterByName(name: string): Promise<Cluster | undefined>;
  /** The cluster with this name; a NotFound UserError (CLUSTER_NOT_FOUND) when there is none. */
  getClusterByName(name: string): Promise<Cluster>;
  createCluster(request: CreateClusterRequest): Promise<Cluster>;
  /** JSON merge patch: only the fields given change; `null` clears one. */
  patchCluster(id: string, patch: MergePatch<ClusterPatch>): Promise<Cluster>;
  /** Starts the asynchronous deletion; returns the cluster in phase Deleting. */
  deleteCluster(id: string): Promise<Cluster>;

  listNodePools(options?: Omit<ListNodePoolsOptions, "continue">): AsyncGenerator<NodePool>;
  listNodePoolsPage(options?: ListNodePoolsOptions): Promise<List<NodePool>>;
  getNodePool(id: string): Promise<NodePool>;
  findNodePoolByName(clusterID: string, name: string): Promise<NodePool | undefined>;
  /** The pool with this name in this cluster; a NotFound UserError (NODEPOOL_NOT_FOUND) when there is none. */
  getNodePoolByName(clusterID: string, name: string): Promise<NodePool>;
  createNodePool(request: CreateNodePoolRequest): Promise<NodePool>;
  patchNodePool(id: string, patch: MergePatch<NodePoolPatch>): Promise<NodePool>;
  /** `PATCH {desiredNodeCount}`: the controller records it and scales over time. */
  scaleNodePool(id: string, desiredNodeCount: number): Promise<NodePool>;
  /** Starts the asynchronous, draining deletion; returns the pool in phase Deleting. */
  deleteNodePool(id: string): Promise<NodePool>;

  createMachineImage(request: CreateMachineImageRequest): Promise<MachineImage>;
  listMachineImages(options?: Omit<PageOptions, "continue">): AsyncGenerator<MachineImage>;
  listMachineImagesPage(options?: PageOptions): Promise<List<MachineImage>>;
  getMachineImage(id: string): Promise<MachineImage>;

  createClusterRelease(request: CreateClusterReleaseRequest): Promise<ClusterRelease>;
  listClusterReleases(options?: Omit<PageOptions, "continue">): AsyncGenerator<ClusterRelease>;
  listClusterReleasesPage(options?: PageOptions): Promise<List<ClusterRelease>>;
  getClusterRelease(id: string): Promise<ClusterRelease>;

  createNodePoolRelease(request: CreateNodePoolReleaseRequest): Promise<NodePoolRelease>;
  listNodePoolReleases(options?: Omit<PageOptions, "continue">): AsyncGenerator<NodePoolRelease>;
  listNodePoolReleasesPage(options?: PageOptions): Promise<List<NodePoolRelease>>;
  getNodePoolRelease(id: string): Promise<NodePoolRelease>;
}

const SITE_NEXT_STEPS = [
  "check that the controller URL is the site's controller API",
  "check that the controller's NodePort (30080 by default) answers from this machine and that the NetworkPolicy admits your network",
];

interface RequestSpec<T> {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  contentType?: string;
  schema: z.ZodType<T>;
}

/**
 * A typed client for the NVKE controller API. Every failure is a UserError from
 * `@nodekit/errors` with a permanent code (see {@link errorCodes}), the
 * controller's own message verbatim where it sent one, and an exit code. No automatic
 * retries, except exactly one after a 401 with a fresh token.
 */
export function createNvkeClient(options: NvkeClientOptions): NvkeClient {
  const base = options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const log = options.log ?? (() => {});
  let kyInstance: Promise<KyInstance> | undefined;

  // ky is imported on the first request, so importing the schemas costs nothing extra.
  function http(): Promise<KyInstance> {
    kyInstance ??= import("ky").then(({ default: ky }) =>
      ky.create({
        retry: 0,
        throwHttpErrors: false,
        timeout: timeoutMs,
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      }),
    );
    return kyInstance;
  }

  function urlFor(path: string, query: RequestSpec<unknown>["query"]): URL {
    const url = new URL(path.replace(/^\//, ""), base);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** The response, and whether the request carried a bearer token. */
  async function send(spec: RequestSpec<unknown>, url: URL): Promise<{ response: Response; withToken: boolean }> {
    // Loading ky (and Node's fetch under it) is CPU work and reading a cached token is I/O:
    // done together, one hides behind the other.
    const [ky, token] = await Promise.all([http(), options.token === undefined ? undefined : options.token()]);
    const headers: Record<string, string> = { accept: "application/json" };
    if (token !== undefined && token !== "") headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers["content-type"] = spec.contentType ?? "application/json";
    }
    const started = performance.now();
    try {
      const response = await ky(url, { method: spec.method, headers, ...(body === undefined ? {} : { body }) });
      log(
        `${spec.method} ${url.pathname}${url.search} → ${response.status} (${Math.round(performance.now() - started)} ms)`,
      );
      return { response, withToken: headers.authorization !== undefined };
    } catch (error) {
      log(`${spec.method} ${url.pathname}${url.search} → failed (${Math.round(performance.now() - started)} ms)`);
      throw transportError(error, url, timeoutMs);
    }
  }

  async function request<T>(spec: RequestSpec<T>): Promise<T> {
    const url = urlFor(spec.path, spec.query);
    let { response, withToken } = await send(spec, url);
    const sent: boolean[] = [withToken];
    if (response.status === 401 && (options.token !== undefined || options.onUnauthorized !== undefined)) {
      await response.body?.cancel();
      await options.onUnauthorized?.();
      ({ response, withToken } = await send(spec, url));
      sent.push(withToken);
    }
    const text = await readText(response, url, timeoutMs);
    if (response.status >= 400) throw httpError(spec, url, response, text, sent);
    const parsed = parseJson(text, response);
    const result = parsed === undefined ? undefined : spec.schema.safeParse(parsed.value);
    if (result === undefined || !result.success) {
      throw badResponse(
        spec,
        url,
        response,
        text,
        parsed === undefined ? "is not JSON" : "does not match the NVKE API contract",
      );
    }
    return result.data;
  }

  async function* paginate<T>(
    path: string,
    schema: z.ZodType<List<T>>,
    query: Record<string, string | number | undefined>,
  ) {
    let token: string | undefined;
    do {
      const page: List<T> = await request({ method: "GET", path, query: { ...query, continue: token }, schema });
      yield* page.items;
      token = page.continue;
    } while (token !== undefined && token !== "");
  }

  const page = <T>(path: string, schema: z.ZodType<List<T>>, query: Record<string, string | number | undefined>) =>
    request({ method: "GET", path, query, schema });
  const byId = (path: string, id: string) => `${path}/${encodeURIComponent(id)}`;

  const client: NvkeClient = {
    baseUrl: options.baseUrl,
    healthz: () => request({ method: "GET", path: "/healthz", schema: HealthSchema }),
    openApi: () =>
      request({ method: "GET", path: "/api/docs", schema: ApiDocSchema as z.ZodType<Record<string, unknown>> }),

    listClusters: (o = {}) => paginate("/api/v1/clusters", ClusterListSchema, { limit: o.limit }),
    listClustersPage: (o = {}) => page("/api/v1/clusters", ClusterListSchema, { limit: o.limit, continue: o.continue }),
    getCluster: (id) => request({ method: "GET", path: byId("/api/v1/clusters", id), schema: ClusterSchema }),
    async findClusterByName(name) {
      const result = await page("/api/v1/clusters", ClusterListSchema, { name, limit: 1 });
      return result.items.find((cluster) => cluster.name === name);
    },
    async getClusterByName(name) {
      const cluster = await client.findClusterByName(name);
      if (cluster !== undefined) return cluster;
      throw new UserError(errorCodes.CLUSTER_NOT_FOUND, `cluster "${name}" not found`, {
        why: `the NVKE controller at ${options.baseUrl} has no cluster with that name`,
        facts: { cluster: name },
      });
    },
    createCluster: (body) => request({ method: "POST", path: "/api/v1/clusters", body, schema: ClusterSchema }),
    patchCluster: (id, patch) =>
      request({
        method: "PATCH",
        path: byId("/api/v1/clusters", id),
        body: patch,
        contentType: MERGE_PATCH_CONTENT_TYPE,
        schema: ClusterSchema,
      }),
    deleteCluster: (id) => request({ method: "DELETE", path: byId("/api/v1/clusters", id), schema: ClusterSchema }),

    listNodePools: (o = {}) =>
      paginate("/api/v1/nodepools", NodePoolListSchema, { clusterID: o.clusterID, limit: o.limit }),
    listNodePoolsPage: (o = {}) =>
      page("/api/v1/nodepools", NodePoolListSchema, { clusterID: o.clusterID, limit: o.limit, continue: o.continue }),
    getNodePool: (id) => request({ method: "GET", path: byId("/api/v1/nodepools", id), schema: NodePoolSchema }),
    async findNodePoolByName(clusterID, name) {
      const result = await page("/api/v1/nodepools", NodePoolListSchema, { clusterID, name, limit: 1 });
      return result.items.find((pool) => pool.name === name && pool.clusterID === clusterID);
    },
    async getNodePoolByName(clusterID, name) {
      const pool = await client.findNodePoolByName(clusterID, name);
      if (pool !== undefined) return pool;
      throw new UserError(errorCodes.NODEPOOL_NOT_FOUND, `node pool "${name}" not found in cluster ${clusterID}`, {
        facts: { nodePool: name, clusterID },
      });
    },
    createNodePool: (body) => request({ method: "POST", path: "/api/v1/nodepools", body, schema: NodePoolSchema }),
    patchNodePool: (id, patch) =>
      request({
        method: "PATCH",
        path: byId("/api/v1/nodepools", id),
        body: patch,
        contentType: MERGE_PATCH_CONTENT_TYPE,
        schema: NodePoolSchema,
      }),
    scaleNodePool: (id, desiredNodeCount) => client.patchNodePool(id, { desiredNodeCount }),
    deleteNodePool: (id) => request({ method: "DELETE", path: byId("/api/v1/nodepools", id), schema: NodePoolSchema }),

    createMachineImage: (body) =>
      request({ method: "POST", path: "/api/v1/machineimages", body, schema: MachineImageSchema }),
    listMachineImages: (o = {}) => paginate("/api/v1/machineimages", MachineImageListSchema, { limit: o.limit }),
    listMachineImagesPage: (o = {}) =>
      page("/api/v1/machineimages", MachineImageListSchema, { limit: o.limit, continue: o.continue }),
    getMachineImage: (id) =>
      request({ method: "GET", path: byId("/api/v1/machineimages", id), schema: MachineImageSchema }),

    createClusterRelease: (body) =>
      request({ method: "POST", path: "/api/v1/clusterreleases", body, schema: ClusterReleaseSchema }),
    listClusterReleases: (o = {}) => paginate("/api/v1/clusterreleases", ClusterReleaseListSchema, { limit: o.limit }),
    listClusterReleasesPage: (o = {}) =>
      page("/api/v1/clusterreleases", ClusterReleaseListSchema, { limit: o.limit, continue: o.continue }),
    getClusterRelease: (id) =>
      request({ method: "GET", path: byId("/api/v1/clusterreleases", id), schema: ClusterReleaseSchema }),

    createNodePoolRelease: (body) =>
      request({ method: "POST", path: "/api/v1/nodepoolreleases", body, schema: NodePoolReleaseSchema }),
    listNodePoolReleases: (o = {}) =>
      paginate("/api/v1/nodepoolreleases", NodePoolReleaseListSchema, { limit: o.limit }),
    listNodePoolReleasesPage: (o = {}) =>
      page("/api/v1/nodepoolreleases", NodePoolReleaseListSchema, { limit: o.limit, continue: o.continue }),
    getNodePoolRelease: (id) =>
      request({ method: "GET", path: byId("/api/v1/nodepoolreleases", id), schema: NodePoolReleaseSchema }),
  };
  return client;
}

/** Any JSON object (the OpenAPI document is checked only for being one). */
const ApiDocSchema = {
  safeParse: (value: unknown) =>
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? { success: true as const, data: value as Record<string, unknown> }
      : { success: false as const },
};

async function readText(response: Response, url: URL, timeoutMs: number): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    throw transportError(error, url, timeoutMs);
  }
}

function parseJson(text: string, response: Response): { value: unknown } | undefined {
  const type = response.headers.get("content-type") ?? "";
  if (!/\bjson\b/i.test(type) && !/^\s*[{[]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** The first part of a body, on one line, for an error message. */
export function excerpt(text: string, max = 160): string {
  const flat = text
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (flat === "") return "(empty body)";
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function describe(spec: RequestSpec<unknown>, url: URL): string {
  return `${spec.method} ${url.origin}${url.pathname}`;
}

/** What the requests that got a 401 carried, in words: "also after a retry with a fresh token" only when both had one. */
function whatWasSent(sent: readonly boolean[]): string {
  const [first = false, retry] = sent;
  if (retry === undefined) return first ? "to a bearer token" : "to a request without a bearer token";
  if (first && retry) return "to a bearer token, also after a retry with a fresh token";
  if (!first && !retry)
    return "to a request without a bearer token, also when asked again (no token was available to send)";
  return first
    ? "to a bearer token, and to the retry, which carried none"
    : "to a request without a bearer token, and to the retry with a fresh token";
}

function httpError(
  spec: RequestSpec<unknown>,
  url: URL,
  response: Response,
  text: string,
  sent: readonly boolean[] = [false],
): UserError {
  const parsed = parseJson(text, response);
  const body = parsed === undefined ? undefined : ApiErrorBodySchema.safeParse(parsed.value);
  if (body === undefined || !body.success) {
    return badResponse(spec, url, response, text, "is not the NVKE controller's error body");
  }
  const { error } = body.data;
  const status = response.status;
  const problems = detailsToProblems(error.details);
  if (status === 401 || status === 403) {
    const tokenSent = sent.some(Boolean);
    return new UserError(errorCodes.CONTROLLER_UNAUTHORIZED, error.message, {
      why: `the NVKE controller answered ${describe(spec, url)} with ${status} ${error.reason}${status === 401 ? ` ${whatWasSent(sent)}` : ""}`,
      next:
        status === 401 && !tokenSent
          ? [
              "the controller requires a bearer token, and none was sent because no auth ConfigMap (nvke-auth-config or nke-auth-config, in nke-controller or cloud-workflow-engine) was found on the site cluster: check that the site's kubeconfig is the controller's site cluster, and that the ConfigMap exists there",
            ]
          : [
              "check that the site's kubeconfig may create serviceaccounts/token for nke-clients/nke-client",
              "check the audience in the auth ConfigMap (nvke-auth-config or nke-auth-config) matches the controller's",
            ],
      problems,
      facts: { tokenSent },
    });
  }
  if (status === 409) {
    return new UserError(errorCodes.CONTROLLER_CONFLICT, error.message, {
      why: `the NVKE controller refused ${describe(spec, url)} with ${status} ${error.reason}: it conflicts with the current state`,
      problems,
    });
  }
  if (status === 404) {
    return new UserError(errorCodes.CONTROLLER_NOT_FOUND, error.message, { problems });
  }
  if (status >= 500) {
    return new UserError(errorCodes.CONTROLLER_ERROR, error.message, {
      why: `the NVKE controller failed ${describe(spec, url)} with ${status} ${error.reason}`,
      next: ["retry in a while; nothing was changed unless the controller says otherwise", ...SITE_NEXT_STEPS.slice(1)],
      problems,
    });
  }
  return new UserError(errorCodes.CONTROLLER_REJECTED, error.message, {
    why: `the NVKE controller refused ${describe(spec, url)} with ${status} ${error.reason}`,
    problems,
  });
}

function detailsToProblems(details: ApiErrorBody["error"]["details"]): Problem[] {
  return (details ?? []).map((detail) => ({
    severity: "error",
    source: "request",
    path: detail.field.split("."),
    message: detail.message,
  }));
}

function badResponse(spec: RequestSpec<unknown>, url: URL, response: Response, text: string, what: string): UserError {
  const type = response.headers.get("content-type") ?? "no content type";
  return new UserError(
    errorCodes.CONTROLLER_BAD_RESPONSE,
    `the answer to ${describe(spec, url)} (HTTP ${response.status}, ${type}) ${what}: ${excerpt(text)}`,
    {
      why: "something other than the NVKE controller answered (a proxy, a load balancer, another service on that port), or the controller failed",
      next: SITE_NEXT_STEPS,
    },
  );
}

function transportError(error: unknown, url: URL, timeoutMs: number): UserError {
  const name = error instanceof Error ? error.name : "";
  if (name === "TimeoutError") {
    return new UserError(
      errorCodes.CONTROLLER_TIMEOUT,
      `the NVKE controller at ${url.origin} did not answer within ${timeoutMs} ms`,
      { next: SITE_NEXT_STEPS },
    );
  }
  const code = systemCode(error);
  const reason =
    code === "ECONNREFUSED"
      ? "connection refused"
      : code === "ENOTFOUND" || code === "EAI_AGAIN"
        ? "the host name does not resolve"
        : code === "ECONNRESET"
          ? "the connection was reset"
          : code !== undefined
            ? code
            : rootMessage(error);
  return new UserError(
    errorCodes.CONTROLLER_UNREACHABLE,
    `cannot reach the NVKE controller at ${url.origin}: ${reason}`,
    {
      next: SITE_NEXT_STEPS,
    },
  );
}

/** The system error code (ECONNREFUSED, …) anywhere down the cause chain (fetch wraps it twice). */
function systemCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
    const aggregate = current instanceof AggregateError ? current.errors[0] : undefined;
    current = aggregate ?? current.cause;
  }
  return undefined;
}

function rootMessage(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
