import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildOpenApiDocument, IDEMPOTENCY_KEY_HEADER } from "@nodekit/noderings-api";
import { ArchSchema, DEFAULT_PINS, type PinSet } from "@nodekit/version-pins";
import { ApiError, badRequest, notFound } from "./api-error.ts";
import { artifactUrl, buildArtifacts, type ServedArtifact, servedPins } from "./artifacts.ts";
import {
  advance,
  agentsOf,
  type ControllerContext,
  createAgent,
  createHealthReport,
  getAgentRecord,
  nextDueAt,
  offloadingTargets,
  peeringParameters,
  peeringStatus,
  pruneIdempotency,
  reportOffloading,
  requestInbound,
  startOutbound,
} from "./controller.ts";
import { DEFAULT_PLATFORM, DEFAULT_TIMING, type EmulatorState, type Platform, type Timing } from "./state.ts";
import { StateStore } from "./store.ts";

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
  /** One line per request and per background failure; never a token. */
  log?: (line: string) => void;
  newId?: () => string;
}

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
  /** Every request answered (or dropped), in order: for tests to count attempts. */
  readonly requests: readonly RequestRecord[];
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

const BODY_LIMIT = 1024 * 1024;

interface ChaosEntry extends ChaosOptions {
  mode: ChaosMode;
  remaining: number;
}

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
  const temporaryDir =
    options.stateFile === undefined ? await mkdtemp(join(tmpdir(), "noderings-emulator-")) : undefined;
  const stateFile = options.stateFile ?? join(temporaryDir ?? tmpdir(), "state.json");
  let store: StateStore;
  try {
    store = await StateStore.open(stateFile);
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
  const requests: RequestRecord[] = [];
  const inFlight = new Set<string>();
  let pinsOverride: { value: unknown } | undefined;

  // ---- the server, first: the pins name its URL
  const server = createServer((req, res) => void handle(req, res));
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
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
  type Handler = (
    req: IncomingMessage,
    account: string,
    params: string[],
    query: URLSearchParams,
  ) => Promise<[number, unknown]>;
  const routes: Array<{ method: string; pattern: RegExp; idempotent: boolean; handle: Handler }> = [];
  const route = (method: string, path: string, handle: Handler) =>
    routes.push({
      method,
      pattern: new RegExp(`^${path.replace(/\{id\}/g, "([^/]+)")}$`),
      idempotent: method === "POST",
      handle,
    });

  route("GET", "/api/v1/agents", async (_req, account, _p, query) => {
    settle();
    const name = query.get("name");
    const items = agentsOf(state, account)
      .map((record) => record.agent)
      .filter((agent) => name === null || agent.name === name)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return [200, { items }];
  });
  route("POST", "/api/v1/agents", async (req, account) => {
    const body = await readJson(req);
    return [201, await mutate((ctx) => createAgent(state, account, body, ctx))];
  });
  route("GET", "/api/v1/agents/{id}", async (_req, account, [id = ""]) => {
    settle();
    return [200, getAgentRecord(state, account, id).agent];
  });
  route("GET", "/api/v1/pins", async (_req, _account, _p, query) => {
    const arch = query.get("arch");
    if (arch === null || arch === "") throw badRequest("arch is required: GET /api/v1/pins?arch=amd64|arm64|arm");
    if (!ArchSchema.safeParse(arch).success) {
      throw new ApiError("invalid", `the platform has no pins for architecture "${arch}"`, {
        details: [{ field: "arch", message: "must be amd64, arm64 or arm" }],
      });
    }
    return [200, pinsOverride === undefined ? pins : pinsOverride.value];
  });
  route("GET", "/api/v1/agents/{id}/peering/parameters", async (_req, account, [id = ""]) => {
    getAgentRecord(state, account, id);
    return [200, peeringParameters(context())];
  });
  route("POST", "/api/v1/agents/{id}/peering/outbound", async (req, account, [id = ""]) => {
    const body = await readJson(req);
    return [201, await mutate((ctx) => startOutbound(state, account, id, body, ctx))];
  });
  route("POST", "/api/v1/agents/{id}/peering/inbound", async (req, account, [id = ""]) => {
    const body = await readJson(req);
    return [202, await mutate((ctx) => requestInbound(state, account, id, body, ctx))];
  });
  route("GET", "/api/v1/agents/{id}/peering", async (_req, account, [id = ""]) => {
    settle();
    return [200, peeringStatus(getAgentRecord(state, account, id), context())];
  });
  route("GET", "/api/v1/agents/{id}/offloading", async (_req, account, [id = ""]) => [
    200,
    offloadingTargets(getAgentRecord(state, account, id), context()),
  ]);
  route("PUT", "/api/v1/agents/{id}/offloading", async (req, account, [id = ""]) => {
    const body = await readJson(req);
    return [200, await mutate((ctx) => reportOffloading(state, account, id, body, ctx))];
  });
  route("POST", "/api/v1/agents/{id}/health-reports", async (req, account, [id = ""]) => {
    const body = await readJson(req);
    return [201, await mutate((ctx) => createHealthReport(state, account, id, body, ctx))];
  });

  // ---- emulator-only control routes (tests, the demo)
  async function control(req: IncomingMessage, path: string): Promise<[number, unknown]> {
    if (req.method !== "POST")
      throw new ApiError("method_not_allowed", `${req.method} is not allowed on ${path}; use POST`);
    const body = (await readJson(req)) as Record<string, unknown> | null;
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw badRequest("the body must be a JSON object");
    if (path === "/_emulator/chaos") {
      const mode = body.mode as ChaosMode;
      if (!CHAOS_MODES.includes(mode))
        throw badRequest(
          `chaos takes {"mode": one of ${CHAOS_MODES.join(", ")}, "count"?, "method"?, "path"?, "retryAfterSeconds"?, "delayMs"?}`,
        );
      emulator.chaos(mode, body as ChaosOptions);
      return [200, { queued: chaosQueue.length }];
    }
    if (path === "/_emulator/artifacts") {
      const fault = body.fault as ArtifactFault;
      if (fault !== "tamper" && fault !== "truncate")
        throw badRequest('artifacts takes {"fault": "tamper" | "truncate", "tool"?, "count"?}');
      emulator.artifactFault(fault, {
        ...(typeof body.tool === "string" ? { tool: body.tool } : {}),
        ...(typeof body.count === "number" ? { count: body.count } : {}),
      });
      return [200, { queued: faults.length }];
    }
    if (path === "/_emulator/pins") {
      emulator.setPins("pins" in body ? body.pins : undefined);
      return [200, { overridden: pinsOverride !== undefined }];
    }
    if (path === "/_emulator/inbound-failure") {
      if (typeof body.agentId !== "string" || typeof body.message !== "string")
        throw badRequest('inbound-failure takes {"agentId", "message"}');
      await emulator.failNextInbound(body.agentId, body.message);
      return [200, {}];
    }
    if (path === "/_emulator/reconcile") {
      await emulator.reconcile();
      return [200, {}];
    }
    throw notFound(`no emulator route ${path}`);
  }

  function serveArtifact(req: IncomingMessage, res: ServerResponse, path: string): number {
    const artifact = artifacts.find((a) => new URL(artifactUrl(url, a)).pathname === path);
    req.resume();
    if (artifact === undefined || req.method !== "GET") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Not Found\n");
      return 404;
    }
    const index = faults.findIndex((f) => f.tool === undefined || f.tool === artifact.tool);
    const fault = index === -1 ? undefined : faults[index];
    if (fault !== undefined && --fault.remaining <= 0) faults.splice(index, 1);
    const headers = {
      "content-type": artifact.member === undefined ? "text/x-shellscript" : "application/gzip",
      "content-length": String(artifact.bytes.length),
    };
    if (fault?.fault === "truncate") {
      res.writeHead(200, headers);
      res.write(artifact.bytes.subarray(0, Math.floor(artifact.bytes.length / 2)), () => req.socket.destroy());
      return 200;
    }
    const bytes = Buffer.from(artifact.bytes);
    if (fault?.fault === "tamper") {
      const at = Math.floor(bytes.length / 2);
      bytes[at] = (bytes[at] ?? 0) ^ 0xff;
    }
    res.writeHead(200, headers);
    res.end(bytes);
    return 200;
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
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    if (match === null) throw new ApiError("unauthenticated", "no API token: send Authorization: Bearer <token>");
    const account = tokens.get(match[1] ?? "");
    if (account === undefined)
      throw new ApiError(
        "unauthenticated",
        "the API token is not valid: it is unknown, revoked or for another environment",
      );
    return account;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const requestId = `req-${randomBytes(6).toString("hex")}`;
    const parsed = new URL(req.url ?? "/", "http://emulator");
    const path = parsed.pathname.replace(/\/+$/, "") || "/";
    const method = req.method ?? "GET";
    const record: RequestRecord = { method, path, status: 0 };
    const idempotencyKey = header(req, IDEMPOTENCY_KEY_HEADER);
    if (idempotencyKey !== undefined) record.idempotencyKey = idempotencyKey;
    let holding: string | undefined;
    try {
      if (path.startsWith("/_emulator/")) {
        const [status, body] = await control(req, path);
        record.status = status;
        return sendJson(res, status, body, requestId);
      }
      if (path.startsWith("/artifacts/")) {
        record.status = serveArtifact(req, res, path);
        return;
      }
      if (path === "/healthz" && method === "GET") {
        record.status = 200;
        return sendJson(res, 200, { status: "ok" }, requestId);
      }
      if (path === "/api/docs" && method === "GET") {
        record.status = 200;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(openApi);
        return;
      }

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
        const answered = await applyChaos(chaos, req, res, requestId);
        if (answered !== undefined) {
          record.status = answered;
          return;
        }
      }

      const matches = routes.filter((r) => r.pattern.test(path));
      if (matches.length === 0) throw notFound(`no route for ${method} ${path}`);
      const account = authenticate(req.headers.authorization);
      record.account = account;
      const match = matches.find((r) => r.method === method);
      if (match === undefined) {
        res.setHeader("allow", matches.map((r) => r.method).join(", "));
        throw new ApiError(
          "method_not_allowed",
          `${method} is not allowed on ${path}; use ${matches.map((r) => r.method).join(" or ")}`,
        );
      }
      const params = (match.pattern.exec(path) ?? []).slice(1).map(decodeURIComponent);

      let status: number;
      let body: unknown;
      if (match.idempotent && idempotencyKey !== undefined) {
        if (idempotencyKey.length === 0 || idempotencyKey.length > 255)
          throw badRequest(`${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 characters`);
        const slot = `${account}\u0000${idempotencyKey}`;
        if (inFlight.has(slot))
          throw new ApiError(
            "idempotency_key_in_use",
            `a request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry shortly`,
          );
        inFlight.add(slot);
        holding = slot;
        const text = await readText(req);
        const fingerprint = `${method} ${path} ${createHash("sha256").update(text).digest("hex")}`;
        const earlier = state.idempotency[slot];
        if (earlier !== undefined) {
          if (earlier.fingerprint !== fingerprint) {
            throw new ApiError(
              "idempotency_key_reused",
              `this ${IDEMPOTENCY_KEY_HEADER} was used for a different request; use a new key for a new request`,
              {
                details: [{ field: IDEMPOTENCY_KEY_HEADER, message: "was used with another method, path or body" }],
              },
            );
          }
          record.replayed = true;
          res.setHeader("idempotent-replayed", "true");
          [status, body] = [earlier.status, earlier.body];
        } else {
          try {
            await slowly(chaos);
            [status, body] = await match.handle(withBody(req, text), account, params, parsed.searchParams);
          } catch (error) {
            // A refusal is an answer too: the same request gets the same refusal, not a second try.
            if (!(error instanceof ApiError) || error.status >= 500) throw error;
            state.idempotency[slot] = {
              account,
              fingerprint,
              status: error.status,
              body: error.toBody(requestId),
              createdMs: now(),
            };
            await store.persist();
            throw error;
          }
          state.idempotency[slot] = { account, fingerprint, status, body, createdMs: now() };
          await store.persist();
        }
      } else {
        await slowly(chaos);
        [status, body] = await match.handle(req, account, params, parsed.searchParams);
      }
      if (chaos?.mode === "lose-response") {
        record.status = 0;
        req.socket.destroy();
        return;
      }
      record.status = status;
      sendJson(res, status, body, requestId);
    } catch (error) {
      const apiError =
        error instanceof ApiError
          ? error
          : new ApiError("internal", `internal error: ${(error as Error)?.message ?? String(error)}`);
      if (!(error instanceof ApiError)) log(`internal error on ${method} ${path}: ${(error as Error)?.stack ?? error}`);
      record.status = apiError.status;
      if (!res.headersSent && !res.destroyed) {
        if (apiError.retryAfter !== undefined) res.setHeader("retry-after", String(apiError.retryAfter));
        if (apiError.status === 401) res.setHeader("www-authenticate", 'Bearer realm="noderings"');
        const existing = holding === undefined ? undefined : state.idempotency[holding];
        sendJson(
          res,
          apiError.status,
          existing?.status === apiError.status ? existing.body : apiError.toBody(requestId),
          requestId,
        );
      }
    } finally {
      if (holding !== undefined) inFlight.delete(holding);
      requests.push(record);
      const who = record.account === undefined ? "" : ` account=${record.account}`;
      log(
        `${method} ${parsed.pathname}${parsed.search} ${record.status || "dropped"} ${Math.round(performance.now() - started)}ms${who}${record.replayed ? " replayed" : ""}${record.chaos === undefined ? "" : ` chaos=${record.chaos}`}`,
      );
    }
  }

  /** Answers per the chaos mode; undefined means: go on and answer normally (slow, lose-response). */
  async function applyChaos(
    entry: ChaosEntry,
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
  ): Promise<number | undefined> {
    switch (entry.mode) {
      case "slow":
      case "lose-response":
        return undefined;
    }
    req.resume();
    switch (entry.mode) {
      case "html500":
        res.writeHead(500, { "content-type": "text/html" });
        res.end(
          "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><center><h1>500 Internal Server Error</h1></center><hr><center>nginx</center></body></html>\n",
        );
        return 500;
      case "json500":
        sendJson(
          res,
          500,
          new ApiError("internal", "internal error: emulated failure (chaos)").toBody(requestId),
          requestId,
        );
        return 500;
      case "json503": {
        const error = new ApiError("unavailable", "the service is restarting; retry shortly (chaos)", {
          retryAfter: entry.retryAfterSeconds ?? 1,
        });
        res.setHeader("retry-after", String(error.retryAfter));
        sendJson(res, 503, error.toBody(requestId), requestId);
        return 503;
      }
      case "rate-limit": {
        const seconds = entry.retryAfterSeconds ?? 1;
        rateLimit = {
          until: now() + seconds * 1000,
          path: entry.path ?? "/api/v1",
          ...(entry.method === undefined ? {} : { method: entry.method.toUpperCase() }),
        };
        res.setHeader("retry-after", String(seconds));
        sendJson(res, 429, new ApiError("rate_limited", "too many requests; slow down").toBody(requestId), requestId);
        return 429;
      }
      case "stall":
        res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
        res.write('{"items":[');
        return 200;
      case "hang":
        return 0;
      case "reset":
        req.socket.destroy();
        return 0;
    }
  }

  const emulator: RunningNodeRingsEmulator = {
    url,
    stateFile,
    state,
    pins,
    artifacts,
    requests,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
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

function sendJson(res: ServerResponse, status: number, body: unknown, requestId: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "x-request-id": requestId,
  });
  res.end(text);
}

async function readText(req: IncomingMessage): Promise<string> {
  const pre = (req as IncomingMessage & { preRead?: string }).preRead;
  if (pre !== undefined) return pre;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw badRequest(`the request body is larger than ${BODY_LIMIT} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The request with its body already read (for the idempotency fingerprint). */
function withBody(req: IncomingMessage, text: string): IncomingMessage {
  return Object.assign(req, { preRead: text });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "application/json") {
    req.resume();
    throw new ApiError("unsupported_media_type", `Content-Type must be application/json; got "${type || "none"}"`);
  }
  const text = await readText(req);
  if (text.trim() === "") throw badRequest("the request body is empty; send a JSON object");
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw badRequest(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}
