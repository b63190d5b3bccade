import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  answerChaos,
  bearerToken,
  type EmulatorServer,
  type Exchange,
  mediaType,
  parseJsonBody,
  Router,
  readText,
  type StateStore,
  serveInfoRoutes,
  startEmulatorServer,
} from "@nodekit/emulator-kit";
import { buildOpenApiDocument, IDEMPOTENCY_KEY_HEADER } from "@nodekit/noderings-api";
import { ArchSchema, DEFAULT_PINS, type PinSet } from "@nodekit/version-pins";
import { ApiError, badRequest, notFound, refuse } from "./api-error.ts";
import { artifactUrl, buildArtifacts, type ServedArtifact, servedPins } from "./artifacts.ts";
import {
  advance,
  agentsOf,
  type ControllerContext,
  completeInbound,
  completeTeardown,
  createAgent,
  createHealthReport,
  deleteAgent,
  getAgentRecord,
  nextDueAt,
  offloadingTargets,
  peeringParameters,
  peeringStatus,
  pruneIdempotency,
  reportOffloading,
  requestInbound,
  startOutbound,
  startTeardown,
} from "./controller.ts";
import { RequestLog } from "./request-log.ts";
import { DEFAULT_PLATFORM, DEFAULT_TIMING, type EmulatorState, type Platform, type Timing } from "./state.ts";
import { openStateStore } from "./store.ts";

/** A token the emulator accepts, and the account it stands for (agents are per account). */
export interface TokenSpec {
  token: string;
  account: string;
}

/** The token accepted when none is configured; documented, so it is no secret. */
export const DEV_TOKEN = "nr-emulator-dev-token";

export interface NodeRingsEmulatorOptions {
  /** Tokens it accepts: a bare string is a token of account `default`. Default: {@link DEV_TOKEN}. */
  tokens?: ReadonlyArray<string | TokenSpec>;
  /** The state file (JSON, validated at start, written atomically). Default: a fresh one in a new temp directory, removed on stop. */
  stateFile?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The clock (ms since the epoch): asynchronous steps fall due by it. Tests pass their own and call reconcile(). */
  clock?: () => number;
  timing?: Partial<Timing>;
  platform?: Partial<Platform>;
  /**
   * The token the control routes (`/_emulator/*`) take, as `Authorization: Bearer <token>`;
   * an API token is not one. Default: a random one of this emulator's own ({@link RunningNodeRingsEmulator.adminToken}).
   */
  adminToken?: string;
  /** How many of the last requests {@link RunningNodeRingsEmulator.requests} keeps (default {@link REQUEST_LOG_LIMIT}). */
  requestLogLimit?: number;
  /** One line per request and per background failure; never a token. */
  log?: (line: string) => void;
  newId?: () => string;
}

/** How many of the last requests an emulator keeps for tests to look at, unless told otherwise. */
const REQUEST_LOG_LIMIT = 1_000;

/** How the next matching API requests are answered instead of normally. */
export type ChaosMode =
  /** 500 with an nginx HTML page (a proxy's, not the API's). */
  | "html500"
  /** 500 with the API's error body. */
  | "json500"
  /** 503 with the error body and Retry-After. */
  | "json503"
  /** 429 with Retry-After; until that time passes, every matching request is 429 again, as a real rate limiter answers. */
  | "rate-limit"
  /** Takes `delayMs` to carry the request out (after authentication, holding its Idempotency-Key), then answers normally. */
  | "slow"
  /** Sends the headers and the start of a body, then nothing more. */
  | "stall"
  /** Never answers. */
  | "hang"
  /** Closes the connection without an answer, before doing anything. */
  | "reset"
  /** Carries the request out (and keeps its result), then closes the connection instead of answering. */
  | "lose-response";
export const CHAOS_MODES: readonly ChaosMode[] = [
  "html500",
  "json500",
  "json503",
  "rate-limit",
  "slow",
  "stall",
  "hang",
  "reset",
  "lose-response",
];

export interface ChaosOptions {
  /** How many matching requests (default 1). */
  count?: number;
  /** Only requests with this method. */
  method?: string;
  /** Only requests whose path starts with this (default `/api/v1`). */
  path?: string;
  /** For rate-limit and json503 (default 1). */
  retryAfterSeconds?: number;
  /** For slow (default 1000). */
  delayMs?: number;
}

/** What happens to the next download of an artifact: `tamper` changes one byte (same size), `truncate` sends half and closes. */
export type ArtifactFault = "tamper" | "truncate";

export interface RequestRecord {
  method: string;
  path: string;
  status: number;
  account?: string;
  idempotencyKey?: string;
  replayed?: boolean;
  chaos?: ChaosMode;
}

export interface RunningNodeRingsEmulator {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly stateFile: string;
  readonly state: EmulatorState;
  /** The pin set it serves (unless {@link setPins} replaced it). */
  readonly pins: PinSet;
  readonly artifacts: readonly ServedArtifact[];
  /**
   * The requests answered (or dropped), in order, for tests to count attempts: only the last
   * `requestLogLimit` (1,000 by default) are kept, so that memory stays bounded however long
   * it runs; `length` and `slice(from)` count them all (see {@link RequestLog}).
   */
  readonly requests: RequestLog<RequestRecord>;
  /** The token its control routes take. */
  readonly adminToken: string;
  /** Stops serving and writes the state file (and removes a default temporary one). */
  stop(): Promise<void>;
  /** Settles every transition due by the clock now (tests call it instead of sleeping). */
  reconcile(): Promise<void>;
  chaos(mode: ChaosMode, options?: ChaosOptions): void;
  artifactFault(fault: ArtifactFault, options?: { tool?: string; count?: number }): void;
  /** Serves this value (any JSON, valid or not) as the pin set; undefined serves the real one again. */
  setPins(value: unknown): void;
  /** The agent's next inbound peering settles as Failed with this message. */
  failNextInbound(agentId: string, message: string): Promise<void>;
}

interface ChaosEntry extends ChaosOptions {
  mode: ChaosMode;
  remaining: number;
}

/** What a route is given: the request, the caller's account, the path's `{id}`s, the query, and the JSON body. */
interface RouteContext {
  account: string;
  params: string[];
  query: URLSearchParams;
  body(): Promise<unknown>;
}
type Handler = (context: RouteContext) => Promise<[number, unknown]>;

/** Starts the NodeRings API emulator; resolves once it is listening. A bad state file is refused (StateFileError) before it listens. */
export async function startNodeRingsEmulator(
  options: NodeRingsEmulatorOptions = {},
): Promise<RunningNodeRingsEmulator> {
  const now = options.clock ?? Date.now;
  const log = options.log ?? (() => {});
  const timing: Timing = { ...DEFAULT_TIMING, ...options.timing };
  const platform: Platform = { ...DEFAULT_PLATFORM, ...options.platform };
  const tokens = new Map<string, string>();
  for (const spec of options.tokens ?? [DEV_TOKEN]) {
    if (typeof spec === "string") tokens.set(spec, "default");
    else tokens.set(spec.token, spec.account);
  }
  const adminToken = options.adminToken ?? randomBytes(32).toString("base64url");
  const temporaryDir =
    options.stateFile === undefined ? await mkdtemp(join(tmpdir(), "noderings-emulator-")) : undefined;
  const stateFile = options.stateFile ?? join(temporaryDir ?? tmpdir(), "state.json");
  let store: StateStore<EmulatorState>;
  try {
    store = await openStateStore(stateFile);
  } catch (error) {
    if (temporaryDir !== undefined) await rm(temporaryDir, { recursive: true, force: true });
    throw error;
  }
  const { state } = store;
  const artifacts = await buildArtifacts({
    helm: "v3.18.6",
    liqoctl: "v1.0.1",
    k3s: DEFAULT_PINS.tools.k3s.version,
  });

  const chaosQueue: ChaosEntry[] = [];
  let rateLimit: { until: number; method?: string; path: string } | undefined;
  const faults: Array<{ fault: ArtifactFault; tool?: string; remaining: number }> = [];
  const requests = new RequestLog<RequestRecord>(options.requestLogLimit ?? REQUEST_LOG_LIMIT);
  const records = new WeakMap<Exchange, RequestRecord>();
  const inFlight = new Set<string>();
  let pinsOverride: { value: unknown } | undefined;

  // ---- asynchronous steps: due times by the clock, a timer for the next one
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const persist = () =>
    store
      .persist()
      .catch((error: unknown) => log(`cannot write state file ${store.path}: ${(error as Error).message}`));

  function settle(): void {
    if (advance(state, now())) void persist();
    schedule();
  }

  function schedule(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const due = nextDueAt(state);
    if (stopped || due === undefined) return;
    timer = setTimeout(settle, Math.min(Math.max(0, due - now()), 2_147_483_647));
    timer.unref();
  }

  async function mutate<T>(operation: (ctx: ControllerContext) => T): Promise<T> {
    settle();
    const result = operation(context());
    pruneIdempotency(state, now());
    // The answer waits for the state file, so what a client was told survives a restart.
    await store.persist();
    schedule();
    return result;
  }

  // ---- routes
  const routes = new Router<Handler>();

  routes.add("GET", "/api/v1/agents", async ({ account, query }) => {
    settle();
    const name = query.get("name");
    const items = agentsOf(state, account)
      .map((record) => record.agent)
      .filter((agent) => name === null || agent.name === name)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return [200, { items }];
  });
  routes.add("POST", "/api/v1/agents", async ({ account, body }) => {
    const request = await body();
    return [201, await mutate((ctx) => createAgent(state, account, request, ctx))];
  });
  routes.add("GET", "/api/v1/agents/{id}", async ({ account, params: [id = ""] }) => {
    settle();
    return [200, getAgentRecord(state, account, id).agent];
  });
  routes.add("GET", "/api/v1/pins", async ({ query }) => {
    const arch = query.get("arch");
    if (arch === null || arch === "") throw badRequest("arch is required: GET /api/v1/pins?arch=amd64|arm64|arm");
    if (!ArchSchema.safeParse(arch).success) {
      throw new ApiError("invalid", `the platform has no pins for architecture "${arch}"`, {
        details: [{ field: "arch", message: "must be amd64, arm64 or arm" }],
      });
    }
    return [200, pinsOverride === undefined ? pins : pinsOverride.value];
  });
  routes.add("GET", "/api/v1/agents/{id}/peering/parameters", async ({ account, params: [id = ""] }) => {
    getAgentRecord(state, account, id);
    return [200, peeringParameters(context())];
  });
  routes.add("DELETE", "/api/v1/agents/{id}", async ({ account, params: [id = ""] }) => [
    200,
    await mutate((ctx) => deleteAgent(state, account, id, ctx)),
  ]);
  routes.add("GET", "/api/v1/agents/{id}/peering", async ({ account, params: [id = ""] }) => {
    settle();
    return [200, peeringStatus(getAgentRecord(state, account, id), context())];
  });
  routes.add("GET", "/api/v1/agents/{id}/offloading", async ({ account, params: [id = ""] }) => [
    200,
    offloadingTargets(getAgentRecord(state, account, id), context()),
  ]);

  // The agent's changes: the request body through its controller rule, answered with the status.
  const agentChanges = [
    ["POST", "/peering/outbound", 201, startOutbound],
    ["POST", "/peering/inbound", 201, requestInbound],
    ["POST", "/peering/inbound/complete", 202, completeInbound],
    ["POST", "/peering/teardown", 201, startTeardown],
    ["POST", "/peering/teardown/complete", 200, completeTeardown],
    ["PUT", "/offloading", 200, reportOffloading],
    ["POST", "/health-reports", 201, createHealthReport],
  ] as const;
  for (const [method, path, status, change] of agentChanges) {
    routes.add(method, `/api/v1/agents/{id}${path}`, async ({ account, params: [id = ""], body }) => {
      const request = await body();
      return [status, await mutate((ctx) => change(state, account, id, request, ctx))];
    });
  }

  // ---- emulator-only control routes (tests, the demo): only with the admin token
  const controlRoutes: Record<string, (body: Record<string, unknown>) => unknown> = {
    "/_emulator/chaos": (body) => {
      const mode = body.mode as ChaosMode;
      if (!CHAOS_MODES.includes(mode))
        throw badRequest(
          `chaos takes {"mode": one of ${CHAOS_MODES.join(", ")}, "count"?, "method"?, "path"?, "retryAfterSeconds"?, "delayMs"?}`,
        );
      emulator.chaos(mode, body as ChaosOptions);
      return { queued: chaosQueue.length };
    },
    "/_emulator/artifacts": (body) => {
      const fault = body.fault as ArtifactFault;
      if (fault !== "tamper" && fault !== "truncate")
        throw badRequest('artifacts takes {"fault": "tamper" | "truncate", "tool"?, "count"?}');
      emulator.artifactFault(fault, {
        ...(typeof body.tool === "string" ? { tool: body.tool } : {}),
        ...(typeof body.count === "number" ? { count: body.count } : {}),
      });
      return { queued: faults.length };
    },
    "/_emulator/pins": (body) => {
      emulator.setPins("pins" in body ? body.pins : undefined);
      return { overridden: pinsOverride !== undefined };
    },
    "/_emulator/inbound-failure": async (body) => {
      if (typeof body.agentId !== "string" || typeof body.message !== "string")
        throw badRequest('inbound-failure takes {"agentId", "message"}');
      await emulator.failNextInbound(body.agentId, body.message);
      return {};
    },
    "/_emulator/reconcile": async () => {
      await emulator.reconcile();
      return {};
    },
  };

  function serveArtifact(exchange: Exchange): void {
    const { req, res, path } = exchange;
    const artifact = artifacts.find((a) => new URL(artifactUrl(url, a)).pathname === path);
    req.resume();
    if (artifact === undefined || exchange.method !== "GET") {
      exchange.status = 404;
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Not Found\n");
      return;
    }
    const index = faults.findIndex((f) => f.tool === undefined || f.tool === artifact.tool);
    const fault = index === -1 ? undefined : faults[index];
    if (fault !== undefined && --fault.remaining <= 0) faults.splice(index, 1);
    const headers = {
      "content-type": artifact.member === undefined ? "text/x-shellscript" : "application/gzip",
      "content-length": String(artifact.bytes.length),
    };
    exchange.status = 200;
    if (fault?.fault === "truncate") {
      res.writeHead(200, headers);
      res.write(artifact.bytes.subarray(0, Math.floor(artifact.bytes.length / 2)), () => req.socket.destroy());
      return;
    }
    const bytes = Buffer.from(artifact.bytes);
    if (fault?.fault === "tamper") {
      const at = Math.floor(bytes.length / 2);
      bytes[at] = (bytes[at] ?? 0) ^ 0xff;
    }
    res.writeHead(200, headers);
    res.end(bytes);
  }

  function takeChaos(method: string, path: string): ChaosEntry | undefined {
    const index = chaosQueue.findIndex(
      (entry) =>
        (entry.method === undefined || entry.method.toUpperCase() === method) &&
        path.startsWith(entry.path ?? "/api/v1"),
    );
    const entry = index === -1 ? undefined : chaosQueue[index];
    if (entry !== undefined && --entry.remaining <= 0) chaosQueue.splice(index, 1);
    return entry;
  }

  function authenticate(header: string | undefined): string {
    const token = bearerToken(header);
    if (token === undefined) throw new ApiError("unauthenticated", "no API token: send Authorization: Bearer <token>");
    const account = tokens.get(token);
    if (account === undefined)
      throw new ApiError(
        "unauthenticated",
        "the API token is not valid: it is unknown, revoked or for another environment",
      );
    return account;
  }

  /** The JSON body (already read, when the Idempotency-Key's fingerprint needed it). */
  async function jsonBody(req: IncomingMessage, preRead: string | undefined): Promise<unknown> {
    const type = mediaType(req);
    if (type !== "application/json") {
      req.resume();
      throw new ApiError("unsupported_media_type", `Content-Type must be application/json; got "${type || "none"}"`);
    }
    return parseJsonBody(preRead ?? (await readText(req, refuse)), refuse);
  }

  async function handle(exchange: Exchange): Promise<void> {
    const { req, method, path } = exchange;
    const record: RequestRecord = { method, path, status: 0 };
    records.set(exchange, record);
    const idempotencyKey = header(req, IDEMPOTENCY_KEY_HEADER);
    if (idempotencyKey !== undefined) record.idempotencyKey = idempotencyKey;
    if (path.startsWith("/artifacts/")) return serveArtifact(exchange);
    if (serveInfoRoutes(exchange, openApi)) return;

    if (rateLimit !== undefined && now() >= rateLimit.until) rateLimit = undefined;
    if (
      rateLimit !== undefined &&
      (rateLimit.method === undefined || rateLimit.method === method) &&
      path.startsWith(rateLimit.path)
    ) {
      req.resume();
      record.chaos = "rate-limit";
      throw new ApiError("rate_limited", "too many requests; slow down", {
        retryAfter: Math.max(1, Math.ceil((rateLimit.until - now()) / 1000)),
      });
    }
    const chaos = takeChaos(method, path);
    if (chaos !== undefined) {
      record.chaos = chaos.mode;
      if (applyChaos(chaos, exchange)) return;
    }

    const {
      handler,
      params,
      principal: account,
    } = await routes.resolve(exchange, refuse, () => {
      const account = authenticate(req.headers.authorization);
      record.account = account;
      return account;
    });
    const routeContext = (preRead?: string): RouteContext => ({
      account,
      params,
      query: exchange.url.searchParams,
      body: () => jsonBody(req, preRead),
    });

    let status: number;
    let body: unknown;
    if (method === "POST" && idempotencyKey !== undefined) {
      if (idempotencyKey.length === 0 || idempotencyKey.length > 255)
        throw badRequest(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 characters`);
      const slot = `${account}\u0000${idempotencyKey}`;
      if (inFlight.has(slot))
        throw new ApiError(
          "idempotency_key_in_use",
          `a request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry shortly`,
        );
      inFlight.add(slot);
      try {
        [status, body] = await idempotently(slot, chaos, routeContext);
      } finally {
        inFlight.delete(slot);
      }
    } else {
      await slowly(chaos);
      [status, body] = await handler(routeContext());
    }
    if (chaos?.mode === "lose-response") return exchange.drop();
    exchange.json(status, body);

    /** The first answer to this Idempotency-Key again (a refusal included), or the route's, kept for the next time. */
    async function idempotently(
      slot: string,
      chaos: ChaosEntry | undefined,
      routeContext: (preRead?: string) => RouteContext,
    ): Promise<[number, unknown]> {
      const text = await readText(req, refuse);
      const fingerprint = `${method} ${path} ${createHash("sha256").update(text).digest("hex")}`;
      const earlier = state.idempotency[slot];
      if (earlier !== undefined) {
        if (earlier.fingerprint !== fingerprint) {
          throw new ApiError(
            "idempotency_key_reused",
            `this ${IDEMPOTENCY_KEY_HEADER} was used for a different request; use a new key for a new request`,
            { details: [{ field: IDEMPOTENCY_KEY_HEADER, message: "was used with another method, path or body" }] },
          );
        }
        record.replayed = true;
        exchange.res.setHeader("idempotent-replayed", "true");
        return [earlier.status, earlier.body];
      }
      let answer: [number, unknown];
      try {
        await slowly(chaos);
        answer = await handler(routeContext(text));
      } catch (error) {
        // A refusal is an answer too: the same request gets the same refusal, not a second try.
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        state.idempotency[slot] = {
          account,
          fingerprint,
          status: error.status,
          body: error.toBody(exchange.requestId),
          createdMs: now(),
        };
        await store.persist();
        throw error;
      }
      state.idempotency[slot] = { account, fingerprint, status: answer[0], body: answer[1], createdMs: now() };
      await store.persist();
      return answer;
    }
  }

  /** Answers per the chaos mode; false means: go on and answer normally (slow, lose-response). */
  function applyChaos(entry: ChaosEntry, exchange: Exchange): boolean {
    switch (entry.mode) {
      case "slow":
      case "lose-response":
        return false;
      case "rate-limit": {
        exchange.req.resume();
        const seconds = entry.retryAfterSeconds ?? 1;
        rateLimit = {
          until: now() + seconds * 1000,
          path: entry.path ?? "/api/v1",
          ...(entry.method === undefined ? {} : { method: entry.method.toUpperCase() }),
        };
        exchange.fail(new ApiError("rate_limited", "too many requests; slow down", { retryAfter: seconds }));
        return true;
      }
      case "stall":
        exchange.req.resume();
        exchange.status = 200;
        exchange.res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
        exchange.res.write('{"items":[');
        return true;
      default:
        answerChaos(exchange, entry.mode, (status) =>
          status === 500
            ? new ApiError("internal", "internal error: emulated failure (chaos)")
            : new ApiError("unavailable", "the service is restarting; retry shortly (chaos)", {
                retryAfter: entry.retryAfterSeconds ?? 1,
              }),
        );
        return true;
    }
  }

  // ---- the server, first: the pins name its URL
  const server: EmulatorServer = await startEmulatorServer({
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.host === undefined ? {} : { host: options.host }),
    log,
    refuse,
    wwwAuthenticate: 'Bearer realm="noderings"',
    requestIdHeader: true,
    control: { adminToken, routes: controlRoutes },
    handle,
    done(exchange) {
      const record = records.get(exchange) ?? { method: exchange.method, path: exchange.path, status: 0 };
      record.status = exchange.status;
      if (record.account !== undefined) exchange.notes.push(`account=${record.account}`);
      if (record.replayed) exchange.notes.push("replayed");
      if (record.chaos !== undefined) exchange.notes.push(`chaos=${record.chaos}`);
      requests.push(record);
    },
  });
  const { url } = server;
  const pins = servedPins(url, artifacts);
  const openApi = JSON.stringify(buildOpenApiDocument({ serverUrl: url }));
  const context = (): ControllerContext => ({
    now: now(),
    timing,
    platform,
    liqoVersion: pins.tools.liqo.version,
    newId: options.newId ?? randomUUID,
    newToken: () => `nrpu_${randomBytes(24).toString("base64url")}`,
  });

  const emulator: RunningNodeRingsEmulator = {
    url,
    stateFile,
    state,
    pins,
    artifacts,
    requests,
    adminToken,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await server.close();
      await store.persist();
      if (temporaryDir !== undefined) await rm(temporaryDir, { recursive: true, force: true });
    },
    async reconcile() {
      settle();
      await store.persist();
    },
    chaos(mode, chaosOptions = {}) {
      const count = chaosOptions.count ?? 1;
      if (!Number.isInteger(count) || count < 1) throw badRequest("count must be a whole number ≥ 1");
      chaosQueue.push({ ...chaosOptions, mode, remaining: count });
    },
    artifactFault(fault, faultOptions = {}) {
      faults.push({
        fault,
        ...(faultOptions.tool === undefined ? {} : { tool: faultOptions.tool }),
        remaining: faultOptions.count ?? 1,
      });
    },
    setPins(value) {
      pinsOverride = value === undefined ? undefined : { value };
    },
    async failNextInbound(agentId, message) {
      const agent = state.agents[agentId];
      if (agent === undefined) throw notFound(`agent ${agentId} not found`);
      agent.peering.inboundFailure = message;
      await store.persist();
    },
  };
  // Resume: what fell due while the emulator was down happens now.
  settle();
  return emulator;
}

function slowly(chaos: ChaosEntry | undefined): Promise<void> {
  return chaos?.mode === "slow"
    ? new Promise((resolve) => setTimeout(resolve, chaos.delayMs ?? 1000))
    : Promise.resolve();
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
