import { randomUUID } from "node:crypto";
import { type Problem, UserError } from "@nodekit/errors";
import {
  abortableSleep,
  classifyTransportError,
  createTransport,
  DEFAULT_MAX_BODY_BYTES,
  excerpt,
  formatBytes,
  type HttpResponse,
  type RetryPolicy as HttpRetryPolicy,
  request as httpRequest,
  type Transport,
  TransportError,
} from "@nodekit/http";
import type * as z from "zod";
import { errorCodes } from "./errors.ts";
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
  /** The connections and the trust for https (`createTransport()` of `@nodekit/http`; default: no keep-alive, the system's CAs). */
  transport?: Transport;
  /** One deadline for each attempt's whole answer, headers and body (default 30 s). */
  timeoutMs?: number;
  /** The longest answer read, counted after decompression (default 16 MiB); a longer one is NODERINGS_RESPONSE_TOO_LARGE. */
  maxResponseBytes?: number;
  /** Ends every request: Ctrl-C, or the caller's deadline for the whole run. */
  signal?: AbortSignal;
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

const DEFAULTS = { timeoutMs: 30_000, limit: 3, backoffMs: 500, maxRetryAfterMs: 30_000 };
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
  const maxBodyBytes = options.maxResponseBytes ?? DEFAULT_MAX_BODY_BYTES;
  const transport = options.transport ?? createTransport();
  const log = options.log ?? (() => {});

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

  function retryPolicy(spec: SendSpec): HttpRetryPolicy | false {
    if (spec.retry === "once") return false;
    return {
      attempts: limit,
      statuses: RETRY_STATUS,
      // A lost connection or no answer in time, before the answer began; once it has, never.
      failures: (failure) =>
        (failure.class === "connection-lost" || failure.class === "timeout") && failure.stage !== "body",
      backoffMs,
      maxWaitMs: maxRetryAfterMs,
      // The first attempt (timed out here) is still running there: wait, then the answer is replayed.
      retryIf: (response) => response.status === 409 && serviceCode(response) === "idempotency_key_in_use",
    };
  }

  async function send(spec: SendSpec): Promise<HttpResponse> {
    const url = urlFor(spec.path, spec.query);
    const token = await readToken();
    const headers: Record<string, string> = { accept: "application/json", authorization: `Bearer ${token}` };
    if (options.userAgent !== undefined) headers["user-agent"] = options.userAgent;
    if (spec.idempotencyKey !== undefined) headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] = spec.idempotencyKey;
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    const what = `${spec.method} ${url.pathname}${url.search}`;
    let attempts = 1;
    let response: HttpResponse;
    try {
      response = await httpRequest({
        method: spec.method,
        url,
        headers,
        ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
        transport,
        timeoutMs,
        maxBodyBytes,
        signal: options.signal,
        retry: retryPolicy(spec),
        idempotent: spec.retry === "idempotent-create",
        onEvent(event) {
          if (event.type === "response") log(`${what} → ${event.status} (${event.ms} ms)`);
          else if (event.type === "failed") log(`${what} → failed (${event.ms} ms)`);
          else {
            attempts = event.retry + 1;
            log(`${what}: ${event.reason}; retry ${event.retry} of ${limit}`);
          }
        },
      });
    } catch (error) {
      throw failure(spec, url, error, attempts);
    }
    if (response.status >= 400) throw httpError(spec, response);
    return response;
  }

  async function request<T>(spec: RequestSpec<T>): Promise<T> {
    const response = await send(spec);
    const value = parseJson(response);
    const result = value === undefined ? undefined : spec.schema.safeParse(value.json);
    if (result === undefined || !result.success) {
      throw badResponse(
        spec,
        response,
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
      const response = await send(spec);
      if (parseJson(response) === undefined) throw badResponse(spec, response, "is not JSON");
      return { text: response.text(), url: response.url.toString() };
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
      const sleep = o.sleep ?? ((ms: number) => abortableSleep(ms, signal));
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

  function failure(spec: SendSpec, url: URL, error: unknown, attempts: number): unknown {
    if (error instanceof UserError && !(error instanceof TransportError)) return error;
    const failed = classifyTransportError(error);
    const tries = attempts > 1 ? ` (${attempts} attempts)` : "";
    const facts = { url: url.origin };
    switch (failed.class) {
      case "timeout":
        return new UserError(
          errorCodes.NODERINGS_TIMEOUT,
          failed.stage === "body"
            ? `the NodeRings API at ${url.origin} began to answer ${spec.method} ${url.pathname} but did not finish within ${timeoutMs} ms${tries}`
            : `the NodeRings API at ${url.origin} did not answer ${spec.method} ${url.pathname} within ${timeoutMs} ms${tries}`,
          {
            why: failed.stage === "body" ? "the answer's body stalled" : undefined,
            next: ["retry later", "check that the API URL is right and reachable from this machine"],
            facts: { ...facts, timeoutMs, stage: failed.stage === "body" ? "body" : "headers" },
          },
        );
      case "too-large":
        return new UserError(
          errorCodes.NODERINGS_RESPONSE_TOO_LARGE,
          `the answer to ${describeRequest(spec, url)} is larger than ${formatBytes(failed.limitBytes ?? maxBodyBytes)}, the most read from one answer; it was not read further`,
          {
            why: "no answer of the NodeRings API comes near that size: something other than the API may be answering",
            next: ["check the API URL", "check this machine's proxy settings"],
            facts: { ...facts, limitBytes: failed.limitBytes ?? maxBodyBytes },
          },
        );
      case "redirect":
        return new UserError(
          errorCodes.NODERINGS_REDIRECTED,
          `${error instanceof Error ? error.message : String(error)}`,
          {
            why: "the NodeRings API never redirects to another origin: the URL may point at a proxy or a login page; the token was not sent there",
            next: ["check the API URL", "check this machine's proxy settings"],
            facts,
          },
        );
      case "bad-response":
        return new UserError(
          errorCodes.NODERINGS_BAD_RESPONSE,
          `the answer to ${describeRequest(spec, url)} could not be read: ${failed.reason}${tries}`,
          {
            why: "something other than the NodeRings API answered (a proxy, a captive portal, another service), or the API failed",
            next: ["check the API URL", "retry later"],
            facts,
          },
        );
      case "aborted":
        return error;
      default:
        return new UserError(
          errorCodes.NODERINGS_UNREACHABLE,
          `cannot reach the NodeRings API at ${url.origin}: ${failed.reason}${tries}`,
          { next: ["check the API URL", "check this machine's network and proxy settings"], facts },
        );
    }
  }

  function httpError(spec: SendSpec, response: HttpResponse): UserError {
    const { status, url } = response;
    const parsed = parseJson(response);
    const body = parsed === undefined ? undefined : ApiErrorBodySchema.safeParse(parsed.json);
    if (body === undefined || !body.success)
      return badResponse(spec, response, "is not the NodeRings API's error body");
    const { code, message, details, requestId } = body.data.error;
    const facts = { status, serviceCode: code, ...(requestId === undefined ? {} : { requestId }) };
    const problems = detailsToProblems(spec, url, details);
    const who = `NodeRings answered ${describeRequest(spec, url)} with ${status} ${code}${requestId === undefined ? "" : ` (request ${requestId})`}`;
    const retries = response.attempts - 1;
    const after = retries > 0 ? `, also after ${retries} ${retries === 1 ? "retry" : "retries"}` : "";
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
      const wait = response.retryAfterMs;
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

  function badResponse(spec: SendSpec, response: HttpResponse, what: string): UserError {
    const type = response.headers["content-type"] ?? "no content type";
    return new UserError(
      errorCodes.NODERINGS_BAD_RESPONSE,
      `the answer to ${describeRequest(spec, response.url)} (HTTP ${response.status}, ${type}) ${what}: ${excerpt(response.text())}`,
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

function parseJson(response: HttpResponse): { json: unknown } | undefined {
  const type = response.headers["content-type"] ?? "";
  if (!/\bjson\b/i.test(type)) return undefined;
  try {
    return { json: JSON.parse(response.text()) };
  } catch {
    return undefined;
  }
}

function serviceCode(response: HttpResponse): string | undefined {
  const parsed = parseJson(response);
  const body = parsed === undefined ? undefined : ApiErrorBodySchema.safeParse(parsed.json);
  return body?.success ? body.data.error.code : undefined;
}
