import { type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, request as send } from "node:http";
import type { Readable, Writable } from "node:stream";
import { UserError } from "@nodekit/errors";
import { classifyTransportError, type TransportClass, TransportError, type TransportStage } from "./classify.ts";
import { createTransport, type Transport } from "./transport.ts";

export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Which redirects are followed: only those within the first URL's origin (scheme, host and
 * port; the default), none (`"manual"`: the 3xx is the answer), or those a rule allows. A
 * rule is asked for every hop and returns true to follow or why not; when a followed hop
 * leaves the origin, Authorization, Cookie and Proxy-Authorization are not sent there.
 */
export type RedirectRule = "same-origin" | "manual" | ((from: URL, to: URL) => true | string);

/**
 * When an answer is asked for again. Only an idempotent request is ever retried (GET, HEAD,
 * or one the caller marks `idempotent`), at most `attempts` times, and never once part of
 * its body went to a sink. The wait is the answer's Retry-After (seconds or an HTTP date),
 * else a backoff that doubles; a Retry-After longer than `maxWaitMs` ends the retries (the
 * answer is returned, with {@link HttpResponse.retryAfterMs}).
 */
export interface RetryPolicy {
  /** Retries after the first attempt (default 3). */
  attempts?: number;
  /** The statuses that are retried (default 429, 502, 503, 504). */
  statuses?: readonly number[];
  /** The transport failures that are retried (default: a connection reset or closed early), or a rule. */
  failures?: readonly TransportClass[] | ((failure: TransportError) => boolean);
  /** An answer retried besides `statuses` (NodeRings' "your first attempt is still running"). */
  retryIf?: (response: HttpResponse) => boolean;
  /** The first wait without Retry-After; each retry doubles it, up to 8 s (default 500 ms). */
  backoffMs?: number;
  /** The longest wait honoured (default 30 s). */
  maxWaitMs?: number;
}

export interface RequestOptions {
  url: URL | string;
  method?: Method;
  /** Sent as given (names in any case); Content-Length is set from the body. */
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** The connection pools and trust (default: a fresh transport, no keep-alive, the system's CAs). */
  transport?: Transport;
  /** One deadline for each attempt's whole answer: connecting, headers, body, its redirects (default 30 s). */
  timeoutMs?: number;
  /** Fails an answer that sends nothing for this long, whatever the deadline (default: off). */
  stallTimeoutMs?: number;
  /**
   * Ends the request, whatever it is doing: Ctrl-C or the whole command's deadline. When its
   * reason is a UserError, that error is thrown; otherwise HTTP_ABORTED.
   */
  signal?: AbortSignal | undefined;
  /** The longest body read from a successful answer, counted after decompression (default 16 MiB). */
  maxBodyBytes?: number;
  /** An answer of 400 or more is read this far and the rest dropped (default 64 KiB): `truncated` says so. */
  maxErrorBodyBytes?: number;
  /**
   * What a successful body past `maxBodyBytes` is: a failure (HTTP_RESPONSE_TOO_LARGE, the
   * default), or `"truncate"`: its start, the rest dropped, for a body read only to be quoted.
   */
  overflow?: "fail" | "truncate";
  /** Decode a gzip, deflate or br Content-Encoding (default true); false hands over the bytes as sent. */
  decode?: boolean;
  redirect?: RedirectRule;
  /** Default 5. */
  maxRedirects?: number;
  /** Default: the policy's defaults. `false`: never retried. */
  retry?: RetryPolicy | false;
  /** The request may be sent twice with the same effect (a POST carrying an idempotency key). */
  idempotent?: boolean;
  /** The Authorization header for each attempt (a token may be refreshed in between); none when undefined. */
  authorization?: () => string | undefined | Promise<string | undefined>;
  /**
   * Called when the answer is 401, once: return true to send the request again (after
   * dropping a cached token, or answering a challenge), false to return the 401.
   */
  onUnauthorized?: (response: HttpResponse) => Promise<boolean>;
  /**
   * Where a successful (2xx) answer's body goes, as it arrives, instead of into memory: a
   * download's file. Called with the answer's head before its body is read (it may refuse the
   * answer by throwing); the sink's own errors are thrown as they are.
   */
  sink?: (head: AnswerHead) => Writable;
  /** The clock (ms since the epoch), for Retry-After dates. */
  now?: () => number;
  /** How a wait between attempts is spent (default: a timer, ended early by `signal`). */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** What happened, for a debug log: each answer, each failure, each retry. Never carries a header. */
  onEvent?: (event: HttpEvent) => void;
}

/** An answer before its body: what a sink is chosen by. */
export interface AnswerHead {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly url: URL;
}

export type HttpEvent =
  | { type: "response"; method: Method; url: URL; status: number; ms: number }
  | { type: "failed"; method: Method; url: URL; ms: number; reason: string }
  | {
      type: "retry";
      method: Method;
      url: URL;
      /** 1 for the first retry. */
      retry: number;
      of: number;
      waitMs: number;
      /** "HTTP 429", "the connection was reset", … */
      reason: string;
      /** Whether the server named the wait (Retry-After). */
      asked: boolean;
    };

export interface HttpResponse {
  readonly status: number;
  /** Header values by lower-case name (repeated headers joined with ", "). */
  readonly headers: Readonly<Record<string, string>>;
  /** Where the answer came from, after the redirects followed. */
  readonly url: URL;
  /** The body (decoded); empty when it went to the sink. */
  readonly body: Uint8Array;
  /** The body was longer than `maxErrorBodyBytes` (or `maxBodyBytes`, with `overflow: "truncate"`): `body` is its start. */
  readonly truncated: boolean;
  /** How many times the request was sent (not counting redirects): 1 when it was not retried. */
  readonly attempts: number;
  /** For each send of the request, the first and the one after a 401: whether it carried Authorization. */
  readonly authorized: readonly boolean[];
  /** The wait this answer's Retry-After asks for, in ms. */
  readonly retryAfterMs: number | undefined;
  text(): string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_ERROR_BODY_BYTES = 64 * 1024;
const DEFAULT_RETRY_STATUSES = [429, 502, 503, 504];
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

/** Retry-After as a wait in ms: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** A duration for people: 300 ms, 1.5 s, 30 s, 2 min. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Number((ms / 1000).toFixed(1))} s`;
  return `${Number((ms / 60_000).toFixed(1))} min`;
}

/** A size for people: 16 MiB, 64 KiB, 1000 bytes. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts (at once when it already has). */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function headerRecord(message: IncomingMessage): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) record[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return record;
}

/** The caller ended the request: its UserError as it is, anything else HTTP_ABORTED. */
function callerAbort(reason: unknown, method: Method, url: URL): UserError {
  if (reason instanceof UserError) return reason;
  return new TransportError("aborted", `${method} ${url.origin}${url.pathname} was ended before its answer`, {
    cause: reason,
  });
}

interface Attempt {
  status: number;
  headers: Record<string, string>;
  url: URL;
  body: Uint8Array;
  truncated: boolean;
  /** Part of the body went to the sink: the request cannot be sent again. */
  sank: boolean;
}

/**
 * Sends one HTTP request and reads its answer, within one deadline per attempt covering the
 * whole answer; follows redirects by `redirect`'s rule; retries an idempotent request on
 * 429/502/503/504 and on a connection lost, as its Retry-After says; sends it once more after
 * a 401 when `onUnauthorized` says so; reads at most `maxBodyBytes` of a body, counted after
 * decompression, and `maxErrorBodyBytes` of an error answer. HTTP statuses are answers, not
 * errors; what fails below them is a {@link TransportError} (classify it with
 * `classifyTransportError`).
 */
export async function request(options: RequestOptions): Promise<HttpResponse> {
  const method = options.method ?? "GET";
  const first = typeof options.url === "string" ? new URL(options.url) : options.url;
  if (first.protocol !== "http:" && first.protocol !== "https:") {
    throw new TransportError("unreachable", `${first.protocol}// is not http or https: ${first.origin}`);
  }
  const transport = options.transport ?? createTransport();
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableSleep;
  const policy = options.retry === false ? undefined : (options.retry ?? {});
  const idempotent = method === "GET" || method === "HEAD" || options.idempotent === true;
  const attempts = policy === undefined || !idempotent ? 0 : (policy.attempts ?? 3);
  const statuses = policy?.statuses ?? DEFAULT_RETRY_STATUSES;
  const failures = policy?.failures ?? ["connection-lost"];
  const retriesFailure =
    typeof failures === "function" ? failures : (failure: TransportError) => failures.includes(failure.class);
  const maxWaitMs = policy?.maxWaitMs ?? 30_000;
  const backoffMs = policy?.backoffMs ?? 500;
  const authorized: boolean[] = [];
  let sent = 0;

  const finish = (answer: Attempt): HttpResponse => ({
    status: answer.status,
    headers: answer.headers,
    url: answer.url,
    body: answer.body,
    truncated: answer.truncated,
    attempts: sent,
    authorized: [...authorized],
    retryAfterMs: retryAfterMs(answer.headers["retry-after"], now()),
    text: () => Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength).toString("utf8"),
  });

  const wait = async (ms: number) => {
    try {
      await sleep(ms, options.signal);
    } catch (error) {
      throw callerAbort(options.signal?.aborted ? options.signal.reason : error, method, first);
    }
  };

  /** The request with its retries: the answer that ends them. */
  async function exchange(): Promise<Attempt> {
    for (let retry = 0; ; retry++) {
      const authorization = options.authorization === undefined ? undefined : await options.authorization();
      const withAuth = authorization !== undefined && authorization !== "";
      let answer: Attempt;
      sent++;
      try {
        answer = await attempt(options, method, first, transport, withAuth ? authorization : undefined);
      } catch (error) {
        const failure = error instanceof TransportError ? error : undefined;
        const sank = (error as { sank?: boolean }).sank === true;
        if (failure === undefined || sank || retry >= attempts || !retriesFailure(failure)) throw error;
        await retryIn(retry, undefined, classifyTransportError(failure).reason);
        continue;
      }
      authorized[authorized.length - 1] = withAuth;
      const response = finish(answer);
      const retryable =
        !answer.sank && retry < attempts && (statuses.includes(answer.status) || policy?.retryIf?.(response) === true);
      if (!retryable) return answer;
      const asked = response.retryAfterMs;
      if (asked !== undefined && asked > maxWaitMs) return answer;
      await retryIn(retry, asked, `HTTP ${answer.status}`);
    }
  }

  /** The wait before retry number `retry + 1`: what the server asked for, else the backoff. */
  async function retryIn(retry: number, asked: number | undefined, reason: string): Promise<void> {
    const waitMs = asked ?? Math.min(backoffMs * 2 ** retry, 8_000);
    options.onEvent?.({
      type: "retry",
      method,
      url: first,
      retry: retry + 1,
      of: attempts,
      waitMs,
      reason,
      asked: asked !== undefined,
    });
    await wait(waitMs);
  }

  authorized.push(false);
  let answer = await exchange();
  if (answer.status === 401 && options.onUnauthorized !== undefined) {
    if (await options.onUnauthorized(finish(answer))) {
      authorized.push(false);
      answer = await exchange();
    }
  }
  return finish(answer);
}

/** One attempt: the request and its redirects, the answer read, all within one deadline. */
async function attempt(
  options: RequestOptions,
  method: Method,
  first: URL,
  transport: Transport,
  authorization: string | undefined,
): Promise<Attempt> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  let stage: TransportStage = "connect";
  let url = first;
  const started = process.hrtime.bigint();
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
  const describe = () => `${method} ${url.origin}${url.pathname}`;
  const timedOut = (what: string, facts: Record<string, number>) =>
    new TransportError("timeout", what, { stage, facts });
  const deadline = setTimeout(
    () => controller.abort(timedOut(`${describe()} did not answer within ${formatDuration(timeoutMs)}`, { timeoutMs })),
    timeoutMs,
  );
  let stall: NodeJS.Timeout | undefined;
  const stallMs = options.stallTimeoutMs;
  let received = 0;
  // One timer, pushed back on every chunk (refresh: no new timer per chunk of a large body).
  const touch = () => {
    if (stallMs === undefined) return;
    if (stall !== undefined) {
      stall.refresh();
      return;
    }
    stall = setTimeout(
      () =>
        controller.abort(
          timedOut(
            stage === "body"
              ? `${describe()} stalled after ${received} bytes (nothing for ${formatDuration(stallMs)})`
              : `${describe()} did not start to answer within ${formatDuration(stallMs)}`,
            { stallTimeoutMs: stallMs },
          ),
        ),
      stallMs,
    );
  };
  const onCallerAbort = () => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) throw callerAbort(options.signal.reason, method, first);
  options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  touch();

  const active: { req?: ClientRequest; res?: IncomingMessage } = {};
  const onAbort = () => {
    const reason = controller.signal.reason;
    const error = reason instanceof Error ? reason : new Error(String(reason));
    active.req?.destroy(error);
    active.res?.destroy(error);
  };
  controller.signal.addEventListener("abort", onAbort, { once: true });

  let sank = false;
  try {
    let currentMethod = method;
    let body = options.body;
    let headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
    if (authorization !== undefined) headers.authorization = authorization;
    const redirect = options.redirect ?? "same-origin";
    const maxRedirects = options.maxRedirects ?? 5;
    for (let hops = 0; ; hops++) {
      stage = "connect";
      const res = await exchangeOnce(transport, url, currentMethod, headers, body, active);
      stage = "body";
      const status = res.statusCode ?? 0;
      options.onEvent?.({ type: "response", method: currentMethod, url, status, ms: Math.round(elapsed()) });
      const location = res.headers.location;
      if (redirect !== "manual" && REDIRECTS.has(status) && location !== undefined) {
        let next: URL | undefined;
        try {
          next = new URL(location, url);
        } catch {
          next = undefined;
        }
        if (next !== undefined) {
          await discard(res, touch);
          const refusal =
            next.protocol !== "http:" && next.protocol !== "https:"
              ? `its scheme ${next.protocol} is not http or https`
              : redirect === "same-origin"
                ? next.origin === first.origin
                  ? true
                  : `${next.origin} is another origin than ${first.origin}`
                : redirect(url, next);
          if (refusal !== true) {
            throw new TransportError(
              "redirect",
              `the answer to ${method} ${first.origin}${first.pathname} is a redirect (${status}) to ${next.origin}${next.pathname}; it was not followed: ${refusal}`,
              { stage: "headers", facts: { redirectOrigin: next.origin, status } },
            );
          }
          if (hops + 1 > maxRedirects) {
            throw new TransportError(
              "redirect",
              `the answer to ${method} ${first.origin}${first.pathname} redirected more than ${maxRedirects} times`,
              { stage: "headers", facts: { status } },
            );
          }
          if (status === 303 || ((status === 301 || status === 302) && currentMethod === "POST")) {
            if (currentMethod !== "HEAD") currentMethod = "GET";
            body = undefined;
            const { "content-type": _type, ...rest } = headers;
            headers = rest;
          }
          if (next.origin !== url.origin) {
            headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name)));
          }
          url = next;
          continue;
        }
      }
      const responseHeaders = headerRecord(res);
      if (options.sink !== undefined && status >= 200 && status < 300) {
        const source = await decoded(res, options, responseHeaders, method);
        const limit = options.maxBodyBytes ?? Number.POSITIVE_INFINITY;
        const declared = declaredLength(responseHeaders, options);
        if (declared !== undefined && declared > limit) throw tooLarge(describe(), limit);
        const count = (chunk: Buffer) => {
          received += chunk.length;
          sank = true;
          touch();
          if (received > limit) throw tooLarge(describe(), limit);
        };
        let sink: Writable;
        try {
          sink = options.sink({ status, headers: responseHeaders, url });
        } catch (error) {
          res.destroy();
          throw error instanceof Error ? Object.assign(error, { fromSink: true }) : error;
        }
        await pipeInto(source, count, sink);
        if (source !== res) await rest(res, touch);
        return { status, headers: responseHeaders, url, body: new Uint8Array(), truncated: false, sank };
      }
      const isError = status >= 400;
      const cuts = isError || options.overflow === "truncate";
      const limit = isError
        ? (options.maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES)
        : (options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
      const declared = declaredLength(responseHeaders, options);
      if (!cuts && declared !== undefined && declared > limit) {
        res.destroy();
        throw tooLarge(describe(), limit);
      }
      const source = await decoded(res, options, responseHeaders, method);
      const chunks: Buffer[] = [];
      let truncated = false;
      await readEach(source, (chunk) => {
        touch();
        const room = limit - received;
        received += chunk.length;
        if (received > limit) {
          if (!cuts) throw tooLarge(describe(), limit);
          chunks.push(chunk.subarray(0, room));
          truncated = true;
          return false;
        }
        chunks.push(chunk);
        return true;
      });
      if (truncated) res.destroy();
      else if (source !== res) await rest(res, touch);
      const bytes = Buffer.concat(chunks);
      return {
        status,
        headers: responseHeaders,
        url,
        body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        truncated,
        sank: false,
      };
    }
  } catch (error) {
    active.req?.destroy();
    active.res?.destroy();
    const failed = failureOf(error, controller.signal, options.signal, method, first, url, stage);
    if (failed instanceof TransportError) {
      options.onEvent?.({
        type: "failed",
        method,
        url,
        ms: Math.round(elapsed()),
        reason: classifyTransportError(failed).reason,
      });
    }
    if (sank && failed instanceof Error) Object.assign(failed, { sank: true });
    throw failed;
  } finally {
    clearTimeout(deadline);
    clearTimeout(stall);
    options.signal?.removeEventListener("abort", onCallerAbort);
    controller.signal.removeEventListener("abort", onAbort);
  }
}

/** What an attempt's failure is: the deadline's, the caller's, the sink's own, or the transport's, classified. */
function failureOf(
  error: unknown,
  attemptSignal: AbortSignal,
  callerSignal: AbortSignal | undefined,
  method: Method,
  first: URL,
  url: URL,
  stage: TransportStage,
): unknown {
  if (attemptSignal.aborted) {
    const reason: unknown = attemptSignal.reason;
    if (reason instanceof TransportError) return reason;
    return callerAbort(callerSignal?.reason ?? reason, method, first);
  }
  if (error instanceof TransportError) return error;
  if (error instanceof UserError) return error;
  if ((error as { fromSink?: boolean }).fromSink === true) return error;
  const failure = classifyTransportError(error);
  const where = `${method} ${url.origin}${url.pathname}`;
  return new TransportError(failure.class, `${where} failed: ${failure.reason}`, {
    cause: error,
    stage,
    ...(failure.code === undefined ? {} : { systemCode: failure.code }),
  });
}

function tooLarge(what: string, limit: number): TransportError {
  return new TransportError("too-large", `the answer to ${what} is larger than ${formatBytes(limit)}`, {
    stage: "body",
    limitBytes: limit,
    facts: { limitBytes: limit },
  });
}

function declaredLength(headers: Record<string, string>, options: RequestOptions): number | undefined {
  const length = headers["content-length"];
  const encoded = (options.decode ?? true) && (headers["content-encoding"] ?? "identity").trim() !== "identity";
  if (length === undefined || encoded || !/^\d+$/.test(length)) return undefined;
  return Number(length);
}

/** Sends the request; resolves with the answer's head (its body still to read). */
async function exchangeOnce(
  transport: Transport,
  url: URL,
  method: Method,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  active: { req?: ClientRequest; res?: IncomingMessage },
): Promise<IncomingMessage> {
  const agent = await transport.agentFor(url);
  const outgoing: OutgoingHttpHeaders = { ...headers };
  if (body !== undefined) outgoing["content-length"] = typeof body === "string" ? Buffer.byteLength(body) : body.length;
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers: outgoing, agent });
    active.req = req;
    active.res = undefined;
    let answered = false;
    // Kept for the request's life: an error after the answer came is the body reader's to see.
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    req.once("response", (res) => {
      answered = true;
      active.res = res;
      // The connection may close between this and the reader's first listener (a decoder is
      // loaded in between): the error is kept on the stream (res.errored), never thrown at the process.
      res.on("error", () => {});
      resolve(res);
    });
    req.end(body);
  });
}

/** A redirect's body, read and dropped (a little of it: past 64 KiB the connection is closed instead). */
async function discard(res: IncomingMessage, touch: () => void): Promise<void> {
  let size = 0;
  await readEach(res, (chunk) => {
    touch();
    size += chunk.length;
    if (size <= DEFAULT_MAX_ERROR_BODY_BYTES) return true;
    res.destroy();
    return false;
  });
}

/**
 * After a decoder's end: the answer itself must have ended too. A compressed stream can end
 * before the bytes the answer declared (a brotli stream can be one byte long); a connection cut
 * after that is a lost answer, not a short one. What follows the compressed stream is dropped.
 */
async function rest(res: IncomingMessage, touch: () => void): Promise<void> {
  if (res.complete) return;
  res.unpipe();
  await discard(res, touch);
  if (!res.complete) throw res.errored ?? lost();
}

const lost = () => Object.assign(new Error("the connection closed before the whole answer"), { code: "ECONNRESET" });

/**
 * Reads a stream chunk by chunk until it ends, `onChunk` returns false (the caller stops
 * reading) or throws. Events, not `for await`: the async iterator destroys the stream when it
 * ends, and a destroyed answer to a HEAD takes its keep-alive connection with it.
 */
function readEach(stream: NodeJS.ReadableStream, onChunk: (chunk: Buffer) => boolean): Promise<void> {
  const readable = stream as unknown as Readable;
  return new Promise((resolve, reject) => {
    if (readable.readableEnded) return resolve();
    if (readable.destroyed) return reject(readable.errored ?? lost());
    const done = (error?: Error) => {
      readable.off("data", onData);
      readable.off("end", onEnd);
      readable.off("error", onError);
      readable.off("close", onClose);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      let more: boolean;
      try {
        more = onChunk(chunk);
      } catch (error) {
        readable.destroy();
        done(error as Error);
        return;
      }
      if (!more) done();
    };
    const onEnd = () => done();
    const onError = (error: Error) => done(error);
    const onClose = () => done(readable.errored ?? lost());
    readable.on("data", onData);
    readable.once("end", onEnd);
    readable.once("error", onError);
    readable.once("close", onClose);
  });
}

/** The body as the caller reads it: decoded (one gzip, deflate or br encoding) unless `decode` is false. */
async function decoded(
  res: IncomingMessage,
  options: RequestOptions,
  headers: Record<string, string>,
  method: Method,
): Promise<NodeJS.ReadableStream> {
  const empty =
    method === "HEAD" || res.statusCode === 204 || res.statusCode === 304 || headers["content-length"] === "0";
  if (options.decode === false || empty) return res;
  const encodings = (headers["content-encoding"] ?? "")
    .split(",")
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== "" && part !== "identity");
  if (encodings.length === 0) return res;
  const fail = (why: string) => {
    res.destroy();
    return new TransportError("bad-response", `the answer's Content-Encoding ${headers["content-encoding"]} ${why}`, {
      stage: "body",
    });
  };
  // One encoding only: a chain of them is how a small answer unpacks to an unbounded one.
  if (encodings.length > 1) throw fail("names more than one encoding; one is the most accepted");
  const zlib = await import("node:zlib");
  const encoding = encodings[0];
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (decoder === undefined) throw fail("is not gzip, deflate or br");
  // Errors after the reader stopped listening (the connection closing later) are not the process's.
  decoder.on("error", () => {});
  if (res.destroyed) {
    decoder.destroy(res.errored ?? lost());
    return decoder;
  }
  res.on("error", (error) => decoder.destroy(error));
  res.on("close", () => {
    if (!res.complete) decoder.destroy(res.errored ?? lost());
  });
  res.pipe(decoder);
  return decoder;
}

/**
 * source → sink, each chunk counted first (`count` throws to stop: the cap), with the sink's
 * backpressure; resolves once the sink has finished. Not stream.pipeline: it makes an
 * AbortController per call and aborts it when done, a DOMException (its stack captured) per
 * answer, which `release verify`'s profile showed once per blob. An error of the sink itself
 * is thrown as it is, marked `fromSink`; on any failure both streams are destroyed.
 */
function pipeInto(source: NodeJS.ReadableStream, count: (chunk: Buffer) => void, sink: Writable): Promise<void> {
  const readable = source as unknown as Readable;
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error, fromSink = false) => {
      if (settled) return;
      settled = true;
      readable.off("data", onData);
      readable.off("end", onEnd);
      readable.off("error", onSourceError);
      readable.off("close", onClose);
      sink.off("drain", onDrain);
      sink.off("finish", onFinish);
      sink.off("error", onSinkError);
      // Permanent listeners: an error after this settled is not the process's to crash on.
      readable.on("error", ignore);
      sink.on("error", ignore);
      if (error === undefined) {
        resolve();
        return;
      }
      readable.destroy();
      sink.destroy();
      reject(fromSink ? Object.assign(error, { fromSink: true }) : error);
    };
    const onData = (chunk: Buffer) => {
      try {
        count(chunk);
      } catch (error) {
        settle(error as Error);
        return;
      }
      if (!sink.write(chunk)) readable.pause();
    };
    const onDrain = () => readable.resume();
    const onEnd = () => sink.end();
    const onFinish = () => settle();
    const onSourceError = (error: Error) => settle(error);
    const onClose = () => {
      if (!readable.readableEnded) settle(readable.errored ?? lost());
    };
    const onSinkError = (error: Error) => settle(error, true);
    sink.on("error", onSinkError);
    sink.on("drain", onDrain);
    sink.once("finish", onFinish);
    if (readable.readableEnded) {
      sink.end();
      return;
    }
    if (readable.destroyed) {
      settle(readable.errored ?? lost());
      return;
    }
    readable.on("error", onSourceError);
    readable.once("close", onClose);
    readable.once("end", onEnd);
    readable.on("data", onData);
  });
}

const ignore = () => {};
