import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EmulatorApiError, type Refuse } from "./api-error.ts";

/** The largest request body an emulator reads. */
export const BODY_LIMIT = 1024 * 1024;

/** What the emulators' control routes answer a request without their admin token with. */
export const ADMIN_TOKEN_REQUIRED =
  "the emulator's control routes need its admin token: send Authorization: Bearer <admin token>";

interface AnswerOptions {
  /** Send the request ID as X-Request-Id with each JSON answer. */
  requestIdHeader: boolean;
  /** The WWW-Authenticate header of a 401. */
  wwwAuthenticate: string | undefined;
}

/** One request and its answer, as the shell and an emulator's handlers see it. */
export class Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  /** The path without trailing slashes (`/` for none). */
  readonly path: string;
  readonly url: URL;
  readonly requestId: string;
  readonly started = performance.now();
  /** The status answered; 0 while none is (and, at the end, for a request dropped without an answer). */
  status = 0;
  /** Words the request's log line ends with: `account=…`, `replayed`, `chaos=…`. */
  readonly notes: string[] = [];
  private readonly answer: AnswerOptions;

  constructor(req: IncomingMessage, res: ServerResponse, answer: AnswerOptions) {
    this.req = req;
    this.res = res;
    this.answer = answer;
    this.method = req.method ?? "GET";
    this.url = new URL(req.url ?? "/", "http://emulator");
    this.path = this.url.pathname.replace(/\/+$/, "") || "/";
    this.requestId = `req-${randomBytes(6).toString("hex")}`;
  }

  /** Answers with a JSON body. */
  json(status: number, body: unknown): void {
    const text = JSON.stringify(body);
    this.status = status;
    this.res.writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
      ...(this.answer.requestIdHeader ? { "x-request-id": this.requestId } : {}),
    });
    this.res.end(text);
  }

  /** Answers with the service's error body (and Retry-After, and WWW-Authenticate for a 401), unless an answer has begun. */
  fail(error: EmulatorApiError, body: unknown = error.toBody(this.requestId)): void {
    this.status = error.status;
    if (this.res.headersSent || this.res.destroyed) return;
    if (error.retryAfter !== undefined) this.res.setHeader("retry-after", String(error.retryAfter));
    if (error.status === 401 && this.answer.wwwAuthenticate !== undefined) {
      this.res.setHeader("www-authenticate", this.answer.wwwAuthenticate);
    }
    this.json(error.status, body);
  }

  /** Closes the connection without an answer. */
  drop(): void {
    this.status = 0;
    this.req.socket.destroy();
  }
}

/** The routes under `/_emulator/` (tests, the demo): never part of the service's API. */
export interface ControlRoutes {
  /**
   * The token they take, as `Authorization: Bearer <token>`: no API token is one, and any other
   * request is 401. Undefined: they take no token.
   */
  adminToken: string | undefined;
  /** By path (`/_emulator/chaos`): each is POSTed a JSON object and answers 200 with what it returns. */
  routes: Readonly<Record<string, (body: Record<string, unknown>) => unknown>>;
}

export interface EmulatorServerOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** One line per request and per failure of the emulator's own; never a token. */
  log: (line: string) => void;
  refuse: Refuse;
  /** The WWW-Authenticate header of a 401 (the NodeRings API sends one). */
  wwwAuthenticate?: string;
  /** Send each request's ID as X-Request-Id (the NodeRings API does). */
  requestIdHeader?: boolean;
  control: ControlRoutes;
  /** Every request but the control routes': answer it, throw an {@link EmulatorApiError}, or drop it. */
  handle(exchange: Exchange): Promise<void>;
  /** After each request, answered, refused or dropped (before its log line). */
  done?(exchange: Exchange): void;
}

export interface EmulatorServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

/**
 * The emulators' HTTP shell on loopback: the control routes (admin token, POST, a JSON object
 * body), the emulator's own `handle` for everything else, its refusals answered in its error
 * shape (anything else thrown is a logged 500), and one log line per request.
 */
export async function startEmulatorServer(options: EmulatorServerOptions): Promise<EmulatorServer> {
  const { log, refuse } = options;
  const answer: AnswerOptions = {
    requestIdHeader: options.requestIdHeader ?? false,
    wwwAuthenticate: options.wwwAuthenticate,
  };

  async function control(exchange: Exchange): Promise<void> {
    const { req, method, path } = exchange;
    const { adminToken, routes } = options.control;
    if (adminToken !== undefined && !sameToken(bearerToken(req.headers.authorization), adminToken)) {
      req.resume();
      throw refuse(401, ADMIN_TOKEN_REQUIRED);
    }
    if (method !== "POST") {
      req.resume();
      throw refuse(405, `${method} is not allowed on ${path}; use POST`);
    }
    const body = await readJson(req, ["application/json"], refuse);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw refuse(400, "the body must be a JSON object");
    }
    const route = routes[path];
    if (route === undefined) throw refuse(404, `no emulator route ${path}`);
    exchange.json(200, await route(body as Record<string, unknown>));
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const exchange = new Exchange(req, res, answer);
    try {
      if (exchange.path.startsWith("/_emulator/")) await control(exchange);
      else await options.handle(exchange);
    } catch (error) {
      if (error instanceof EmulatorApiError) exchange.fail(error);
      else {
        log(`internal error on ${exchange.method} ${exchange.path}: ${(error as Error)?.stack ?? error}`);
        exchange.fail(refuse(500, `internal error: ${(error as Error)?.message ?? String(error)}`));
      }
    } finally {
      options.done?.(exchange);
      const { method, url, status, notes, started } = exchange;
      const ms = Math.round(performance.now() - started);
      log(`${method} ${url.pathname}${url.search} ${status || "dropped"} ${ms}ms${notes.map((n) => ` ${n}`).join("")}`);
    }
  }

  const server = createServer((req, res) => void onRequest(req, res));
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}

/** Compares in constant time (the digests, so that the lengths tell nothing either). */
function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * The service's routes, `{id}` standing for one path segment. A request is refused 404 when
 * no route has its path, then authenticated (an unknown path is 404 with or without a token,
 * as the services answer), then refused 405 (with Allow) when none takes its method.
 */
export class Router<Handler> {
  private readonly routes: Array<{ method: string; pattern: RegExp; handler: Handler }> = [];

  add(method: string, path: string, handler: Handler): void {
    this.routes.push({ method, pattern: new RegExp(`^${path.replace(/\{id\}/g, "([^/]+)")}$`), handler });
  }

  async resolve<Principal>(
    exchange: Exchange,
    refuse: Refuse,
    authenticate: () => Principal | Promise<Principal>,
  ): Promise<{ handler: Handler; params: string[]; principal: Principal }> {
    const { method, path } = exchange;
    const matches = this.routes.filter((route) => route.pattern.test(path));
    if (matches.length === 0) throw refuse(404, `no route for ${method} ${path}`);
    const principal = await authenticate();
    const match = matches.find((route) => route.method === method);
    if (match === undefined) {
      const allowed = matches.map((route) => route.method);
      exchange.res.setHeader("allow", allowed.join(", "));
      throw refuse(405, `${method} is not allowed on ${path}; use ${allowed.join(" or ")}`);
    }
    const params = (match.pattern.exec(path) ?? []).slice(1).map(decodeURIComponent);
    return { handler: match.handler, params, principal };
  }
}

/** `GET /healthz` and `GET /api/docs` (the OpenAPI document), which every emulator serves: whether it answered. */
export function serveInfoRoutes(exchange: Exchange, openApi: string): boolean {
  if (exchange.method !== "GET") return false;
  if (exchange.path === "/healthz") {
    exchange.json(200, { status: "ok" });
    return true;
  }
  if (exchange.path === "/api/docs") {
    exchange.status = 200;
    exchange.res.writeHead(200, { "content-type": "application/json" });
    exchange.res.end(openApi);
    return true;
  }
  return false;
}

/** The body as text: 400 past {@link BODY_LIMIT}. */
export async function readText(req: IncomingMessage, refuse: Refuse): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw refuse(400, `the request body is larger than ${BODY_LIMIT} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The Content-Type's media type, lower case, without parameters ("" when none was sent). */
export function mediaType(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** Parses JSON text: 400 for an empty or invalid body. */
export function parseJsonBody(text: string, refuse: Refuse): unknown {
  if (text.trim() === "") throw refuse(400, "the request body is empty; send a JSON object");
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw refuse(400, `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** The JSON body of a request of one of the `accepted` media types: 415 for another, 400 for a bad body. */
export async function readJson(req: IncomingMessage, accepted: readonly string[], refuse: Refuse): Promise<unknown> {
  const type = mediaType(req);
  if (!accepted.includes(type)) {
    req.resume();
    throw refuse(415, `Content-Type must be ${accepted.join(" or ")}; got "${type || "none"}"`);
  }
  return parseJsonBody(await readText(req, refuse), refuse);
}

/** Failure modes both services show, as the emulators' chaos routes inject them. */
export type CommonChaos = "html500" | "json500" | "json503" | "hang" | "reset";

/** A proxy's error page in front of the API (nginx's), not the API's own body. */
const NGINX_500 =
  "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><center><h1>500 Internal Server Error</h1></center><hr><center>nginx</center></body></html>\n";

/**
 * Answers as a failing service does: a proxy's HTML 500 page, the service's own 500 or 503
 * (`failure` gives it, in the service's words), no answer at all, or a dropped connection.
 */
export function answerChaos(
  exchange: Exchange,
  mode: CommonChaos,
  failure: (status: 500 | 503) => EmulatorApiError,
): void {
  exchange.req.resume();
  switch (mode) {
    case "html500":
      exchange.status = 500;
      exchange.res.writeHead(500, { "content-type": "text/html" });
      exchange.res.end(NGINX_500);
      return;
    case "json500":
      exchange.fail(failure(500));
      return;
    case "json503":
      exchange.fail(failure(503));
      return;
    case "hang":
      exchange.status = 0;
      return;
    case "reset":
      exchange.drop();
      return;
  }
}
