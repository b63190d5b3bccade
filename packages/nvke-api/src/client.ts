import { type Problem, UserError } from "@nodekit/errors";
import {
  classifyTransportError,
  createTransport,
  excerpt,
  formatBytes,
  formatDuration,
  type HttpResponse,
  request as httpRequest,
  isDnsFailure,
  retryAfterMs,
  type Transport,
  TransportError,
} from "@nodekit/http";
import type * as z from "zod";
import {
  type Check,
  isCluster,
  isClusterRelease,
  isHealth,
  isMachineImage,
  isNodePool,
  isNodePoolRelease,
  listOf,
} from "./checks.ts";
import { MERGE_PATCH_CONTENT_TYPE } from "./constants.ts";
import { errorCodes } from "./errors.ts";
import type {
  ApiErrorBody,
  Cluster,
  ClusterPatch,
  ClusterRelease,
  CreateClusterReleaseRequest,
  CreateClusterRequest,
  CreateMachineImageRequest,
  CreateNodePoolReleaseRequest,
  CreateNodePoolRequest,
  List,
  MachineImage,
  NodePool,
  NodePoolPatch,
  NodePoolRelease,
} from "./schemas.ts";

export interface NvkeClientOptions {
  /** The controller API, e.g. `http://10.0.0.5:30080` (a path prefix is kept: `https://gw/nvke/`). */
  baseUrl: string;
  /** The bearer token to send, or undefined to send none (auth off). Called before every request. */
  token?: () => Promise<string | undefined>;
  /** Called on a 401 before the one retry, so the caller can drop a cached token. */
  onUnauthorized?: () => Promise<void>;
  /**
   * The connections and the trust for an https:// controller (`createTransport({ ca })` from
   * `@nodekit/http`); default: no keep-alive, the system's certificate authorities.
   */
  transport?: Transport;
  /** One overall deadline per request, headers and body together (default 30 s). */
  timeoutMs?: number;
  /**
   * Ends every request when it fires: the caller's deadline for a whole operation (a
   * command's --timeout) or a Ctrl-C. When its reason is a UserError, that error is thrown.
   */
  signal?: AbortSignal;
  /** The longest response body read (default 32 MiB); a longer one fails with CONTROLLER_RESPONSE_TOO_LARGE. */
  maxResponseBytes?: number;
  /**
   * Reads (GET) answered 429, 502, 503 or 504, or whose connection was lost, are sent again
   * after the wait their Retry-After asks for (else a backoff from 500 ms), at most `attempts`
   * times and only while the wait is at most `maxWaitMs` (default 3 retries, 30 s). A write is
   * never retried, except once after a 401 with a fresh token.
   */
  retry?: { attempts?: number; maxWaitMs?: number };
  /** The clock (ms since the epoch), for Retry-After dates. */
  now?: () => number;
  /** How a wait between attempts is spent (default: a timer, ended early by `signal`). */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
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

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

type Schemas = typeof import("./schemas.ts");
// The zod schemas load only when a fast check does not accept an answer (or for an error body).
const loadSchemas = (): Promise<Schemas> => import("./schemas.ts");

/** How an answer is checked: the fast check first, the zod schema for anything it does not accept. */
interface Shape<T> {
  check: Check<T>;
  schema: (schemas: Schemas) => z.ZodType<T>;
}

/** One kind of object the controller serves: where it lives and how its answers are checked. */
interface Kind<T> {
  path: string;
  one: Shape<T>;
  page: Shape<List<T>>;
}

function kind<T>(path: string, check: Check<T>, schema: (s: Schemas) => z.ZodType<T>): Kind<T> {
  const listCheck = listOf(check);
  return {
    path,
    one: { check, schema },
    page: { check: listCheck, schema: (s) => s.listSchema(schema(s)) as unknown as z.ZodType<List<T>> },
  };
}

const KINDS = {
  clusters: kind<Cluster>("/api/v1/clusters", isCluster, (s) => s.ClusterSchema),
  nodePools: kind<NodePool>("/api/v1/nodepools", isNodePool, (s) => s.NodePoolSchema),
  machineImages: kind<MachineImage>("/api/v1/machineimages", isMachineImage, (s) => s.MachineImageSchema),
  clusterReleases: kind<ClusterRelease>("/api/v1/clusterreleases", isClusterRelease, (s) => s.ClusterReleaseSchema),
  nodePoolReleases: kind<NodePoolRelease>(
    "/api/v1/nodepoolreleases",
    isNodePoolRelease,
    (s) => s.NodePoolReleaseSchema,
  ),
};

const HEALTH: Shape<{ status: "ok" }> = { check: isHealth, schema: (s) => s.HealthSchema };
/** Any JSON object (the OpenAPI document is checked only for being one). */
const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const API_DOC: Shape<Record<string, unknown>> = {
  check: isJsonObject,
  schema: () => ({ safeParse: () => ({ success: false }) }) as unknown as z.ZodType<Record<string, unknown>>,
};

type Method = "GET" | "POST" | "PATCH" | "DELETE";
type Query = Record<string, string | number | undefined>;

interface RequestSpec<T> {
  method: Method;
  path: string;
  query?: Query;
  body?: unknown;
  contentType?: string;
  shape: Shape<T>;
}

/**
 * A typed client for the NVKE controller API. Every failure is a UserError from
 * `@nodekit/errors` with a permanent code (see {@link errorCodes}), the controller's own
 * message verbatim where it sent one, and an exit code. Requests go through `@nodekit/http`:
 * each has one deadline (headers and body), its body a size limit; a redirect is followed
 * only within the controller's origin; a read is retried on 429, 502, 503, 504 and a lost
 * connection, waiting as Retry-After says, and any request once after a 401 with a fresh token.
 */
export function createNvkeClient(options: NvkeClientOptions): NvkeClient {
  const base = options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBodyBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const transport = options.transport ?? createTransport();

  function urlFor(path: string, query: Query | undefined): URL {
    const url = new URL(path.replace(/^\//, ""), base);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  async function request<T>(spec: RequestSpec<T>): Promise<T> {
    const url = urlFor(spec.path, spec.query);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const refreshes = options.token !== undefined || options.onUnauthorized !== undefined;
    let response: HttpResponse;
    try {
      response = await httpRequest({
        method: spec.method,
        url,
        headers: {
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": spec.contentType ?? "application/json" }),
        },
        ...(body === undefined ? {} : { body }),
        transport,
        timeoutMs,
        maxBodyBytes,
        signal: options.signal,
        retry: {
          ...(options.retry?.attempts === undefined ? {} : { attempts: options.retry.attempts }),
          ...(options.retry?.maxWaitMs === undefined ? {} : { maxWaitMs: options.retry.maxWaitMs }),
        },
        now,
        ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
        async authorization() {
          const token = options.token === undefined ? undefined : await options.token();
          return token === undefined || token === "" ? undefined : `Bearer ${token}`;
        },
        ...(refreshes
          ? {
              onUnauthorized: async () => {
                await options.onUnauthorized?.();
                return true;
              },
            }
          : {}),
        onEvent(event) {
          const target = `${event.method} ${event.url.pathname}${event.url.search}`;
          if (event.type === "response") log(`${target} → ${event.status} (${event.ms} ms)`);
          else if (event.type === "failed") log(`${target} → failed (${event.ms} ms)`);
          else {
            const why = event.asked ? "the controller asks to retry in" : `${event.reason}; retrying in`;
            log(`${target}: ${why} ${formatDuration(event.waitMs)} (retry ${event.retry} of ${event.of})`);
          }
        },
      });
    } catch (error) {
      throw transportError(error, spec.method, url, timeoutMs);
    }
    if (response.status >= 400) throw await httpError(spec, response, now());
    const parsed = parseJson(response);
    if (parsed !== undefined && spec.shape.check(parsed.value)) return parsed.value;
    const result = parsed === undefined ? undefined : spec.shape.schema(await loadSchemas()).safeParse(parsed.value);
    if (result === undefined || !result.success) {
      throw badResponse(spec, response, parsed === undefined ? "is not JSON" : "does not match the NVKE API contract");
    }
    return result.data;
  }

  const byId = (path: string, id: string) => `${path}/${encodeURIComponent(id)}`;

  function page<T>(of: Kind<T>, query: Query): Promise<List<T>> {
    return request({ method: "GET", path: of.path, query, shape: of.page });
  }

  async function* list<T>(of: Kind<T>, query: Query): AsyncGenerator<T> {
    let token: string | undefined;
    do {
      const result = await page(of, { ...query, continue: token });
      yield* result.items;
      token = result.continue;
    } while (token !== undefined && token !== "");
  }

  const get = <T>(of: Kind<T>, id: string) => request({ method: "GET", path: byId(of.path, id), shape: of.one });
  const create = <T>(of: Kind<T>, body: unknown) => request({ method: "POST", path: of.path, body, shape: of.one });
  const patch = <T>(of: Kind<T>, id: string, body: unknown) =>
    request({
      method: "PATCH",
      path: byId(of.path, id),
      body,
      contentType: MERGE_PATCH_CONTENT_TYPE,
      shape: of.one,
    });
  const remove = <T>(of: Kind<T>, id: string) => request({ method: "DELETE", path: byId(of.path, id), shape: of.one });
  const { clusters, nodePools, machineImages, clusterReleases, nodePoolReleases } = KINDS;

  const client: NvkeClient = {
    baseUrl: options.baseUrl,
    healthz: () => request({ method: "GET", path: "/healthz", shape: HEALTH }),
    openApi: () => request({ method: "GET", path: "/api/docs", shape: API_DOC }),

    listClusters: (o = {}) => list(clusters, { limit: o.limit }),
    listClustersPage: (o = {}) => page(clusters, { limit: o.limit, continue: o.continue }),
    getCluster: (id) => get(clusters, id),
    async findClusterByName(name) {
      const result = await page(clusters, { name, limit: 1 });
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
    createCluster: (body) => create(clusters, body),
    patchCluster: (id, body) => patch(clusters, id, body),
    deleteCluster: (id) => remove(clusters, id),

    listNodePools: (o = {}) => list(nodePools, { clusterID: o.clusterID, limit: o.limit }),
    listNodePoolsPage: (o = {}) => page(nodePools, { clusterID: o.clusterID, limit: o.limit, continue: o.continue }),
    getNodePool: (id) => get(nodePools, id),
    async findNodePoolByName(clusterID, name) {
      const result = await page(nodePools, { clusterID, name, limit: 1 });
      return result.items.find((pool) => pool.name === name && pool.clusterID === clusterID);
    },
    async getNodePoolByName(clusterID, name) {
      const pool = await client.findNodePoolByName(clusterID, name);
      if (pool !== undefined) return pool;
      throw new UserError(errorCodes.NODEPOOL_NOT_FOUND, `node pool "${name}" not found in cluster ${clusterID}`, {
        facts: { nodePool: name, clusterID },
      });
    },
    createNodePool: (body) => create(nodePools, body),
    patchNodePool: (id, body) => patch(nodePools, id, body),
    scaleNodePool: (id, desiredNodeCount) => client.patchNodePool(id, { desiredNodeCount }),
    deleteNodePool: (id) => remove(nodePools, id),

    createMachineImage: (body) => create(machineImages, body),
    listMachineImages: (o = {}) => list(machineImages, { limit: o.limit }),
    listMachineImagesPage: (o = {}) => page(machineImages, { limit: o.limit, continue: o.continue }),
    getMachineImage: (id) => get(machineImages, id),

    createClusterRelease: (body) => create(clusterReleases, body),
    listClusterReleases: (o = {}) => list(clusterReleases, { limit: o.limit }),
    listClusterReleasesPage: (o = {}) => page(clusterReleases, { limit: o.limit, continue: o.continue }),
    getClusterRelease: (id) => get(clusterReleases, id),

    createNodePoolRelease: (body) => create(nodePoolReleases, body),
    listNodePoolReleases: (o = {}) => list(nodePoolReleases, { limit: o.limit }),
    listNodePoolReleasesPage: (o = {}) => page(nodePoolReleases, { limit: o.limit, continue: o.continue }),
    getNodePoolRelease: (id) => get(nodePoolReleases, id),
  };
  return client;
}

function parseJson(response: HttpResponse): { value: unknown } | undefined {
  const type = response.headers["content-type"] ?? "";
  const text = response.text();
  if (!/\bjson\b/i.test(type) && !/^\s*[{[]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

function describe(method: string, url: URL): string {
  return `${method} ${url.origin}${url.pathname}`;
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

async function httpError(spec: RequestSpec<unknown>, response: HttpResponse, nowMs: number): Promise<UserError> {
  const { status, url } = response;
  const parsed = parseJson(response);
  const schemas = parsed === undefined ? undefined : await loadSchemas();
  const body = parsed === undefined ? undefined : schemas?.ApiErrorBodySchema.safeParse(parsed.value);
  const retryAfter = response.headers["retry-after"];
  if (status === 429 || (status === 503 && retryAfter !== undefined)) {
    return busy(spec, url, status, body?.success ? body.data.error.message : undefined, retryAfter, nowMs);
  }
  if (body === undefined || !body.success) {
    return badResponse(spec, response, "is not the NVKE controller's error body");
  }
  const { error } = body.data;
  const problems = detailsToProblems(error.details);
  const what = describe(spec.method, url);
  if (status === 401 || status === 403) {
    const tokens = response.authorized;
    const tokenSent = tokens.some(Boolean);
    return new UserError(errorCodes.CONTROLLER_UNAUTHORIZED, error.message, {
      why: `the NVKE controller answered ${what} with ${status} ${error.reason}${status === 401 ? ` ${whatWasSent(tokens)}` : ""}`,
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
      why: `the NVKE controller refused ${what} with ${status} ${error.reason}: it conflicts with the current state`,
      problems,
    });
  }
  if (status === 404) {
    return new UserError(errorCodes.CONTROLLER_NOT_FOUND, error.message, { problems });
  }
  if (status >= 500) {
    return new UserError(errorCodes.CONTROLLER_ERROR, error.message, {
      why: `the NVKE controller failed ${what} with ${status} ${error.reason}`,
      next: ["retry in a while; nothing was changed unless the controller says otherwise", ...SITE_NEXT_STEPS.slice(1)],
      problems,
    });
  }
  return new UserError(errorCodes.CONTROLLER_REJECTED, error.message, {
    why: `the NVKE controller refused ${what} with ${status} ${error.reason}`,
    problems,
  });
}

/** 429 (or 503 with Retry-After) that was not, or no longer, retried: "try again", saying when. */
function busy(
  spec: RequestSpec<unknown>,
  url: URL,
  status: number,
  message: string | undefined,
  retryAfter: string | undefined,
  nowMs: number,
): UserError {
  const waitMs = retryAfterMs(retryAfter, nowMs);
  const when =
    waitMs === undefined
      ? "in a while (it did not say when)"
      : `in ${formatDuration(waitMs)}, at ${new Date(nowMs + waitMs).toISOString().replace(/\.\d{3}Z$/, "Z")}`;
  const retried = spec.method === "GET" ? "" : `; a ${spec.method} is never retried by itself, so nothing was changed`;
  return new UserError(
    errorCodes.CONTROLLER_BUSY,
    `the NVKE controller is too busy for ${describe(spec.method, url)} (${status}${message === undefined ? "" : `: ${message}`})`,
    {
      why: `it asks to be called again ${when}${retried}`,
      next: `try again ${waitMs === undefined ? "in a while" : `after ${formatDuration(waitMs)}`}`,
      facts: waitMs === undefined ? {} : { retryAfterMs: waitMs },
    },
  );
}

function detailsToProblems(details: ApiErrorBody["error"]["details"]): Problem[] {
  return (details ?? []).map((detail) => ({
    severity: "error",
    source: "request",
    path: detail.field.split("."),
    message: detail.message,
  }));
}

function badResponse(spec: RequestSpec<unknown>, response: HttpResponse, what: string): UserError {
  const type = response.headers["content-type"] ?? "no content type";
  return new UserError(
    errorCodes.CONTROLLER_BAD_RESPONSE,
    `the answer to ${describe(spec.method, response.url)} (HTTP ${response.status}, ${type}) ${what}: ${excerpt(response.text())}`,
    {
      why: "something other than the NVKE controller answered (a proxy, a load balancer, another service on that port), or the controller failed",
      next: SITE_NEXT_STEPS,
    },
  );
}

/** A failure below the answer (classified by @nodekit/http) in the controller's words and codes. */
function transportError(error: unknown, method: Method, url: URL, timeoutMs: number): unknown {
  if (error instanceof UserError && !(error instanceof TransportError)) return error; // the caller's own (--timeout)
  const failure = classifyTransportError(error);
  switch (failure.class) {
    case "timeout":
      return new UserError(
        errorCodes.CONTROLLER_TIMEOUT,
        `the NVKE controller at ${url.origin} did not answer ${method} ${url.pathname} within ${formatDuration(timeoutMs)}`,
        {
          why: "every request has one deadline for the whole answer, headers and body",
          next: [...SITE_NEXT_STEPS, "if the controller is only slow, allow each request more time"],
          facts: { timeoutMs },
        },
      );
    case "too-large": {
      const limit = failure.limitBytes ?? 0;
      return new UserError(
        errorCodes.CONTROLLER_RESPONSE_TOO_LARGE,
        `the answer to ${describe(method, url)} is larger than ${formatBytes(limit)}, the most read from one response; it was not read further`,
        {
          why: "a page of the NVKE API holds at most 1000 objects, far less than that: something other than the controller may be answering",
          next: [...SITE_NEXT_STEPS, "if the controller really sends answers this large, raise the limit"],
          facts: { limitBytes: limit },
        },
      );
    }
    case "redirect": {
      const to = error instanceof UserError ? error.facts.redirectOrigin : undefined;
      const status = error instanceof UserError ? error.facts.status : undefined;
      if (typeof to === "string") {
        return new UserError(
          errorCodes.CONTROLLER_REDIRECTED,
          `the answer to ${describe(method, url)} is a redirect (${status}) to another origin, ${to}; it was not followed`,
          {
            why: "a controller API never redirects to another host or port: the URL may point at a proxy or a login page, or the answer was tampered with; nothing was sent to the other origin",
            next: SITE_NEXT_STEPS,
            facts: { redirectOrigin: to },
          },
        );
      }
      return new UserError(
        errorCodes.CONTROLLER_REDIRECTED,
        `the answer to ${describe(method, url)} redirected too many times`,
        {
          why: "a controller API does not redirect; a proxy in front of it may be misconfigured",
          next: SITE_NEXT_STEPS,
        },
      );
    }
    case "tls":
      return new UserError(
        errorCodes.CONTROLLER_TLS_UNTRUSTED,
        `the NVKE controller at ${url.origin} presented a certificate that is not trusted: ${failure.reason}`,
        {
          why: "its certificate does not chain to a trusted certificate authority, or does not name this host",
          next: [
            "trust the certificate authority that signed it (install it in the system trust store, or name it for this client)",
            "check that the URL uses the host name the certificate is for",
          ],
        },
      );
    case "aborted":
      return error;
    case "bad-response":
      return new UserError(
        errorCodes.CONTROLLER_BAD_RESPONSE,
        `the answer to ${describe(method, url)} could not be read: ${failure.reason}`,
        {
          why: "something other than the NVKE controller answered (a proxy, a load balancer, another service on that port), or the controller failed",
          next: SITE_NEXT_STEPS,
        },
      );
    default:
      return new UserError(
        errorCodes.CONTROLLER_UNREACHABLE,
        `cannot reach the NVKE controller at ${url.origin}: ${failure.reason}`,
        {
          next: isDnsFailure(failure)
            ? ["check the host name in the controller URL", ...SITE_NEXT_STEPS]
            : SITE_NEXT_STEPS,
        },
      );
  }
}
