import { randomUUID } from "node:crypto";
import { type Problem, UserError } from "@nodekit/errors";
import type { HTTPError, KyInstance, RetryOptions } from "ky";
import type * as z from "zod";
import { errorCodes } from "./errors.ts";
import { excerpt, systemReason } from "./http.ts";
import {
  type Agent,
  AgentListSchema,
  AgentSchema,
  type ApiErrorBody,
  ApiErrorBodySchema,
  type CompleteInboundPeeringRequest,
  type CreateAgentRequest,
  type CreateHealthReportRequest,
  type HealthReport,
  HealthReportSchema,
  HealthSchema,
  IDEMPOTENCY_KEY_HEADER,
  type InboundPeering,
  InboundPeeringSchema,
  type OffloadingTargets,
  OffloadingTargetsSchema,
  type OutboundPeering,
  OutboundPeeringSchema,
  type PeeringParameters,
  PeeringParametersSchema,
  type PeeringStatus,
  PeeringStatusSchema,
  type PeeringTeardown,
  PeeringTeardownSchema,
  type ReportOffloadingRequest,
  type RequestInboundPeeringRequest,
  type StartOutboundPeeringRequest,
  type TeardownPeeringRequest,
} from "./schemas.ts";

export interface RetryPolicy {
  /** Retries after the first attempt (default 3). Only reads and the agent create are retried. */
  limit?: number;
  /** The first backoff; each retry doubles it (default 500 ms, at most 8 s). */
  backoffMs?: number;
  /** The longest `Retry-After` honoured (default 30 s); a longer one fails at once with NODERINGS_RATE_LIMITED. */
  maxRetryAfterMs?: number;
}

export interface NodeRingsClientOptions {
  /** The API's base URL, e.g. `https://api.noderings.io` (a path prefix is kept). Never guessed. */
  baseUrl: string;
  /**
   * The API token, or a function that returns it (called before every request). The
   * client sends it only to `baseUrl`'s origin and never puts it in an error or a log line.
   */
  token: string | (() => string | undefined | Promise<string | undefined>);
  /** The transport (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
  /** Deadline of each attempt: for the response headers, and again for the body (default 30 s). */
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Debug log: one line per attempt (method, path, status, time) and per retry. Never carries the token. */
  log?: (line: string) => void;
  /** Sent as User-Agent, e.g. `nr/0.1.0`. */
  userAgent?: string;
}

export interface WaitOptions {
  /** Between polls (default 2 s). */
  intervalMs?: number;
  /** Give up after this long (default 10 min) with PEERING_TIMEOUT. */
  timeoutMs?: number;
  /** The clock (ms); tests pass their own. */
  now?: () => number;
  /** How to wait between polls; tests pass one that advances their clock. */
  sleep?: (ms: number) => Promise<void>;
  /** Stops the wait at once when aborted (Ctrl-C): it rejects with the signal's reason, as fetch does. */
  signal?: AbortSignal | undefined;
}

export interface NodeRingsClient {
  readonly baseUrl: string;
  healthz(): Promise<{ status: "ok" }>;

  /**
   * Creates an agent. Retried on 5xx, 429, timeouts and lost connections with the same
   * Idempotency-Key, so a retry is answered with the first answer and never makes a
   * second agent. A name already taken is NODERINGS_CONFLICT (see {@link ensureAgent}).
   */
  createAgent(request: CreateAgentRequest, options?: { idempotencyKey?: string }): Promise<Agent>;
  getAgent(id: string): Promise<Agent>;
  /** The agent with this name, or undefined. One request. */
  findAgentByName(name: string): Promise<Agent | undefined>;
  /** The agent with this name; AGENT_NOT_FOUND when there is none. */
  getAgentByName(name: string): Promise<Agent>;
  /**
   * The agent with this name, created when there is none: find, else create (with an
   * idempotency key), and if another run created it in between (409), find it again.
   */
  ensureAgent(
    request: CreateAgentRequest,
    options?: { idempotencyKey?: string },
  ): Promise<{ agent: Agent; created: boolean }>;

  /** The platform's pin set for this architecture, as the raw JSON text and the URL it came from (`@nodekit/version-pins` validates it). */
  getPinsDocument(options: { arch: string }): Promise<{ text: string; url: string }>;

  /** What the agent's liqoctl needs to know before peering (no secrets). */
  getPeeringParameters(agentId: string): Promise<PeeringParameters>;
  /** Starts outbound peering: the platform issues a one-time peering user. Sent once, never retried. */
  startOutboundPeering(agentId: string, request: StartOutboundPeeringRequest): Promise<OutboundPeering>;
  /**
   * Tells the platform outbound is established and asks it for the reverse peering: it
   * issues a one-time consumer credential for its own cluster, for the reverse `liqoctl peer`
   * the agent runs. Sent once, never retried.
   */
  requestInboundPeering(agentId: string, request: RequestInboundPeeringRequest): Promise<InboundPeering>;
  /** Tells the platform the reverse `liqoctl peer` is done; it then checks it (inbound Pending, then Established). Sent once, never retried. */
  completeInboundPeering(agentId: string, request: CompleteInboundPeeringRequest): Promise<PeeringStatus>;
  getPeeringStatus(agentId: string): Promise<PeeringStatus>;
  /** Polls until inbound is Established (returned), Failed (PEERING_FAILED) or the wait ends (PEERING_TIMEOUT). */
  waitForInboundPeering(agentId: string, options?: WaitOptions): Promise<PeeringStatus>;

  /**
   * Starts tearing the peering down (`nr cluster reset`): the platform issues a one-time
   * peering user and consumer credential for the two `liqoctl unpeer` calls. Sent once, never retried.
   */
  startPeeringTeardown(agentId: string, request: TeardownPeeringRequest): Promise<PeeringTeardown>;
  /** Tells the platform both `liqoctl unpeer` calls returned: both directions are None, nothing is offloaded. Sent once, never retried. */
  completePeeringTeardown(agentId: string, request: TeardownPeeringRequest): Promise<PeeringStatus>;
  /** Deregisters the agent (its peering must be torn down first: 409 otherwise), answering it as it was. Gone already is NODERINGS_NOT_FOUND. */
  deleteAgent(agentId: string): Promise<Agent>;

  /** Which namespaces to offload: the VNC gateway's always, and how optional ones are offloaded. */
  getOffloadingTargets(agentId: string): Promise<OffloadingTargets>;
  /** Reports every namespace now offloaded (replaces the last report). Sent once, never retried. */
  reportOffloading(agentId: string, request: ReportOffloadingRequest): Promise<OffloadingTargets>;

  /** Posts the verify phase's result. Sent once, never retried. */
  postHealthReport(agentId: string, report: CreateHealthReportRequest): Promise<HealthReport>;
}

type RetryMode = "read" | "idempotent-create" | "once";

interface SendSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  retry: RetryMode;
  idempotencyKey?: string;
}

interface RequestSpec<T> extends SendSpec {
  schema: z.ZodType<T>;
}

interface Answer {
  response: Response;
  text: string;
  url: URL;
}

const DEFAULTS = { timeoutMs: 30_000, limit: 3, backoffMs: 500, maxBackoffMs: 8_000, maxRetryAfterMs: 30_000 };
const RETRY_STATUS = [408, 429, 500, 502, 503, 504];

/**
 * A typed client for the NodeRings API. Every failure is a UserError with a code from
 * {@link errorCodes}, the service's own message verbatim where it sent one, and what to
 * do next. Reads and the agent create are retried (bounded, with backoff, honouring a
 * bounded Retry-After); every other write is sent once.
 */
export function createNodeRingsClient(options: NodeRingsClientOptions): NodeRingsClient {
  const base = new URL(options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`);
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const limit = options.retry?.limit ?? DEFAULTS.limit;
  const backoffMs = options.retry?.backoffMs ?? DEFAULTS.backoffMs;
  const maxRetryAfterMs = options.retry?.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs;
  const log = options.log ?? (() => {});
  let kyInstance: Promise<KyInstance> | undefined;

  // ky is loaded on the first request, so importing the schemas costs nothing more.
  function http(): Promise<KyInstance> {
    kyInstance ??= import("ky").then(({ default: ky }) =>
      ky.create({ timeout: timeoutMs, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) }),
    );
    return kyInstance;
  }

  async function readToken(): Promise<string> {
    const token = typeof options.token === "function" ? await options.token() : options.token;
    if (token === undefined || token.trim() === "") {
      throw new UserError(errorCodes.NODERINGS_NO_TOKEN, "no NodeRings API token was given; nothing was sent", {
        next: "give the API token of your NodeRings account",
      });
    }
    return token.trim();
  }

  function urlFor(path: string, query: SendSpec["query"]): URL {
    const url = new URL(path.replace(/^\//, ""), base);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(key, value);
    return url;
  }

  function retryOptions(spec: SendSpec): RetryOptions {
    if (spec.retry === "once") return { limit: 0 };
    return {
      limit,
      methods: [spec.method.toLowerCase() as "get" | "post"],
      statusCodes: RETRY_STATUS,
      afterStatusCodes: [429, 503],
      maxRetryAfter: maxRetryAfterMs,
      delay: (attempt) => Math.min(backoffMs * 2 ** (attempt - 1), DEFAULTS.maxBackoffMs),
      retryOnTimeout: true,
      // A Retry-After beyond the bound fails now: waiting less than asked would only be refused again.
      shouldRetry: ({ error }) => {
        const wait = retryAfterMs(error);
        if (wait !== undefined && wait > maxRetryAfterMs) return false;
        // The first attempt (timed out here) is still running there: wait, then the answer is replayed.
        return serviceCode(error) === "idempotency_key_in_use" ? true : undefined;
      },
    };
  }

  async function send(spec: SendSpec): Promise<Answer> {
    const url = urlFor(spec.path, spec.query);
    const [ky, token] = await Promise.all([http(), readToken()]);
    const headers: Record<string, string> = { accept: "application/json", authorization: `Bearer ${token}` };
    if (options.userAgent !== undefined) headers["user-agent"] = options.userAgent;
    if (spec.idempotencyKey !== undefined) headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] = spec.idempotencyKey;
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    const what = `${spec.method} ${url.pathname}${url.search}`;
    let started = 0;
    let attempts = 1;
    const promise = ky(url, {
      method: spec.method,
      headers,
      ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
      retry: retryOptions(spec),
      hooks: {
        beforeRequest: [
          () => {
            started = performance.now();
          },
        ],
        afterResponse: [
          ({ response }) => {
            log(`${what} → ${response.status} (${Math.round(performance.now() - started)} ms)`);
          },
        ],
        beforeRetry: [
          ({ error, retryCount }) => {
            attempts = retryCount + 1;
            log(`${what}: ${retryReason(error)}; retry ${retryCount} of ${limit}`);
            started = performance.now();
          },
        ],
      },
    });
    let response: Response;
    try {
      response = await promise;
    } catch (error) {
      throw failure(spec, url, error, attempts);
    }
    try {
      return { response, text: await promise.text(), url };
    } catch (error) {
      throw failure(spec, url, error, attempts, "body");
    }
  }

  async function request<T>(spec: RequestSpec<T>): Promise<T> {
    const { response, text, url } = await send(spec);
    const value = parseJson(text, response);
    const result = value === undefined ? undefined : spec.schema.safeParse(value.json);
    if (result === undefined || !result.success) {
      throw badResponse(
        spec,
        url,
        response,
        text,
        value === undefined ? "is not JSON" : "does not match the NodeRings API contract",
      );
    }
    return result.data;
  }

  const agentPath = (id: string, rest = "") => `/api/v1/agents/${encodeURIComponent(id)}${rest}`;

  const client: NodeRingsClient = {
    baseUrl: options.baseUrl,
    healthz: () => request({ method: "GET", path: "/healthz", schema: HealthSchema, retry: "read" }),

    createAgent: (body, o = {}) =>
      request({
        method: "POST",
        path: "/api/v1/agents",
        body,
        schema: AgentSchema,
        retry: "idempotent-create",
        idempotencyKey: o.idempotencyKey ?? randomUUID(),
      }),
    getAgent: (id) => request({ method: "GET", path: agentPath(id), schema: AgentSchema, retry: "read" }),
    async findAgentByName(name) {
      const list = await request({
        method: "GET",
        path: "/api/v1/agents",
        query: { name },
        schema: AgentListSchema,
        retry: "read",
      });
      return list.items.find((agent) => agent.name === name);
    },
    async getAgentByName(name) {
      const agent = await client.findAgentByName(name);
      if (agent !== undefined) return agent;
      throw new UserError(errorCodes.AGENT_NOT_FOUND, `no agent named "${name}"`, {
        why: `the NodeRings account behind this token has no agent with that name at ${options.baseUrl}`,
        facts: { name },
      });
    },
    async ensureAgent(body, o = {}) {
      const existing = await client.findAgentByName(body.name);
      if (existing !== undefined) return { agent: existing, created: false };
      try {
        return { agent: await client.createAgent(body, o), created: true };
      } catch (error) {
        // Another run created it between our look-up and our create: that one is ours too.
        if (!(error instanceof UserError) || error.facts.serviceCode !== "name_taken") throw error;
        const raced = await client.findAgentByName(body.name);
        if (raced === undefined) throw error;
        return { agent: raced, created: false };
      }
    },

    async getPinsDocument({ arch }) {
      const spec: SendSpec = { method: "GET", path: "/api/v1/pins", query: { arch }, retry: "read" };
      const { response, text, url } = await send(spec);
      if (parseJson(text, response) === undefined) throw badResponse(spec, url, response, text, "is not JSON");
      return { text, url: url.toString() };
    },

    getPeeringParameters: (id) =>
      request({
        method: "GET",
        path: agentPath(id, "/peering/parameters"),
        schema: PeeringParametersSchema,
        retry: "read",
      }),
    startOutboundPeering: (id, body) =>
      request({
        method: "POST",
        path: agentPath(id, "/peering/outbound"),
        body,
        schema: OutboundPeeringSchema,
        retry: "once",
      }),
    requestInboundPeering: (id, body) =>
      request({
        method: "POST",
        path: agentPath(id, "/peering/inbound"),
        body,
        schema: InboundPeeringSchema,
        retry: "once",
      }),
    completeInboundPeering: (id, body) =>
      request({
        method: "POST",
        path: agentPath(id, "/peering/inbound/complete"),
        body,
        schema: PeeringStatusSchema,
        retry: "once",
      }),
    getPeeringStatus: (id) =>
      request({ method: "GET", path: agentPath(id, "/peering"), schema: PeeringStatusSchema, retry: "read" }),
    async waitForInboundPeering(id, o = {}) {
      const now = o.now ?? Date.now;
      const { signal } = o;
      const sleep =
        o.sleep ??
        ((ms: number) =>
          new Promise<void>((resolve, reject) => {
            const stop = () => {
              clearTimeout(timer);
              reject(signal?.reason);
            };
            const timer = setTimeout(() => {
              signal?.removeEventListener("abort", stop);
              resolve();
            }, ms);
            signal?.addEventListener("abort", stop, { once: true });
          }));
      const intervalMs = o.intervalMs ?? 2_000;
      const waitMs = o.timeoutMs ?? 600_000;
      const deadline = now() + waitMs;
      for (;;) {
        signal?.throwIfAborted();
        const status = await client.getPeeringStatus(id);
        const { inbound } = status;
        if (inbound.state === "Established") return status;
        if (inbound.state === "Failed" || inbound.state === "None") {
          throw new UserError(
            errorCodes.PEERING_FAILED,
            inbound.message ??
              (inbound.state === "None"
                ? `NodeRings has no inbound peering request for agent ${id}`
                : "NodeRings could not complete the inbound peering"),
            {
              why: `NodeRings reports the inbound peering of agent ${id} as ${inbound.state}`,
              next:
                inbound.state === "None"
                  ? "ask for inbound peering first, once outbound is established"
                  : "check the agent's outbound peering, then ask for inbound peering again",
              facts: { agentId: id, inbound: inbound.state },
            },
          );
        }
        if (now() >= deadline) {
          throw new UserError(
            errorCodes.PEERING_TIMEOUT,
            `NodeRings did not complete the inbound peering of agent ${id} within ${Math.round(waitMs / 1000)} s`,
            {
              why: `it is still ${inbound.state}${inbound.message === undefined ? "" : `: ${inbound.message}`}`,
              next: "wait and check the peering status again; it may still complete",
              facts: { agentId: id, inbound: inbound.state },
            },
          );
        }
        await sleep(Math.min(intervalMs, Math.max(0, deadline - now())));
        signal?.throwIfAborted();
      }
    },

    startPeeringTeardown: (id, body) =>
      request({
        method: "POST",
        path: agentPath(id, "/peering/teardown"),
        body,
        schema: PeeringTeardownSchema,
        retry: "once",
      }),
    completePeeringTeardown: (id, body) =>
      request({
        method: "POST",
        path: agentPath(id, "/peering/teardown/complete"),
        body,
        schema: PeeringStatusSchema,
        retry: "once",
      }),
    deleteAgent: (id) => request({ method: "DELETE", path: agentPath(id), schema: AgentSchema, retry: "once" }),

    getOffloadingTargets: (id) =>
      request({ method: "GET", path: agentPath(id, "/offloading"), schema: OffloadingTargetsSchema, retry: "read" }),
    reportOffloading: (id, body) =>
      request({
        method: "PUT",
        path: agentPath(id, "/offloading"),
        body,
        schema: OffloadingTargetsSchema,
        retry: "once",
      }),

    postHealthReport: (id, body) =>
      request({
        method: "POST",
        path: agentPath(id, "/health-reports"),
        body,
        schema: HealthReportSchema,
        retry: "once",
      }),
  };

  // ---- failures

  function describeRequest(spec: SendSpec, url: URL): string {
    return `${spec.method} ${url.origin}${url.pathname}`;
  }

  function failure(
    spec: SendSpec,
    url: URL,
    error: unknown,
    attempts: number,
    stage: "headers" | "body" = "headers",
  ): UserError {
    if (error instanceof UserError) return error;
    const name = error instanceof Error ? error.name : "";
    const tries = attempts > 1 ? ` (${attempts} attempts)` : "";
    if (name === "HTTPError") return httpError(spec, url, error as HTTPError, attempts);
    if (name === "TimeoutError") {
      return new UserError(
        errorCodes.NODERINGS_TIMEOUT,
        stage === "body"
          ? `the NodeRings API at ${url.origin} began to answer ${spec.method} ${url.pathname} but did not finish within ${timeoutMs} ms`
          : `the NodeRings API at ${url.origin} did not answer ${spec.method} ${url.pathname} within ${timeoutMs} ms${tries}`,
        {
          why: stage === "body" ? "the answer's body stalled" : undefined,
          next: ["retry later", "check that the API URL is right and reachable from this machine"],
          facts: { url: url.origin, timeoutMs, stage },
        },
      );
    }
    return new UserError(
      errorCodes.NODERINGS_UNREACHABLE,
      `cannot reach the NodeRings API at ${url.origin}: ${systemReason(error)}${tries}`,
      {
        next: ["check the API URL", "check this machine's network and proxy settings"],
        facts: { url: url.origin },
      },
    );
  }

  function httpError(spec: SendSpec, url: URL, error: HTTPError, attempts: number): UserError {
    const { response } = error;
    const status = response.status;
    const data: unknown = error.data;
    const body = typeof data === "object" && data !== null ? ApiErrorBodySchema.safeParse(data) : undefined;
    const text = typeof data === "string" ? data : data === undefined ? "" : JSON.stringify(data);
    if (body === undefined || !body.success)
      return badResponse(spec, url, response, text, "is not the NodeRings API's error body");
    const { code, message, details, requestId } = body.data.error;
    const facts = { status, serviceCode: code, ...(requestId === undefined ? {} : { requestId }) };
    const problems = detailsToProblems(spec, url, details);
    const who = `NodeRings answered ${describeRequest(spec, url)} with ${status} ${code}${requestId === undefined ? "" : ` (request ${requestId})`}`;
    const after = attempts > 1 ? `, also after ${attempts - 1} ${attempts === 2 ? "retry" : "retries"}` : "";
    if (status === 401 || status === 403) {
      return new UserError(errorCodes.NODERINGS_UNAUTHORIZED, message, {
        why: who,
        next:
          status === 401
            ? "check the API token: it may be mistyped, revoked, or for another NodeRings environment"
            : "check that the token's account may do this",
        problems,
        facts,
      });
    }
    if (status === 404) return new UserError(errorCodes.NODERINGS_NOT_FOUND, message, { why: who, problems, facts });
    if (status === 409) return new UserError(errorCodes.NODERINGS_CONFLICT, message, { why: who, problems, facts });
    if (status === 429) {
      const wait = retryAfterMs(error);
      return new UserError(errorCodes.NODERINGS_RATE_LIMITED, message, {
        why:
          wait !== undefined && wait > maxRetryAfterMs
            ? `${who}, asking to wait ${Math.ceil(wait / 1000)} s, longer than this client waits (${Math.round(maxRetryAfterMs / 1000)} s)`
            : `${who}${after}`,
        next: "retry later",
        facts: { ...facts, ...(wait === undefined ? {} : { retryAfterMs: wait }) },
      });
    }
    if (status >= 500) {
      return new UserError(errorCodes.NODERINGS_SERVER_ERROR, message, {
        why: `${who}${after}`,
        next:
          spec.retry === "once"
            ? ["check the state with a read before retrying: the request may have been carried out", "retry later"]
            : "retry later",
        problems,
        facts,
      });
    }
    return new UserError(errorCodes.NODERINGS_REJECTED, message, { why: who, problems, facts });
  }

  function badResponse(spec: SendSpec, url: URL, response: Response, text: string, what: string): UserError {
    const type = response.headers.get("content-type") ?? "no content type";
    return new UserError(
      errorCodes.NODERINGS_BAD_RESPONSE,
      `the answer to ${describeRequest(spec, url)} (HTTP ${response.status}, ${type}) ${what}: ${excerpt(text)}`,
      {
        why: "something other than the NodeRings API answered (a proxy, a captive portal, another service), or the API failed",
        next: ["check the API URL", "retry later"],
        facts: { status: response.status },
      },
    );
  }

  return client;
}

function detailsToProblems(spec: SendSpec, url: URL, details: ApiErrorBody["error"]["details"]): Problem[] {
  return (details ?? []).map((detail) => ({
    severity: "error",
    source: `${spec.method} ${url.pathname}`,
    ...(detail.field === "" ? {} : { path: detail.field.split(".") }),
    message: detail.message,
  }));
}

function parseJson(text: string, response: Response): { json: unknown } | undefined {
  const type = response.headers.get("content-type") ?? "";
  if (!/\bjson\b/i.test(type)) return undefined;
  try {
    return { json: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** The wait a 429/503 asks for (Retry-After: seconds or an HTTP date), in ms. */
function retryAfterMs(error: unknown): number | undefined {
  if (!(error instanceof Error) || error.name !== "HTTPError") return undefined;
  const header = (error as HTTPError).response.headers.get("retry-after");
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function serviceCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== "HTTPError") return undefined;
  const body = ApiErrorBodySchema.safeParse((error as HTTPError).data);
  return body.success ? body.data.error.code : undefined;
}

function retryReason(error: Error): string {
  if (error.name === "HTTPError") return `HTTP ${(error as HTTPError).response.status}`;
  if (error.name === "TimeoutError") return "no answer in time";
  return systemReason(error);
}
