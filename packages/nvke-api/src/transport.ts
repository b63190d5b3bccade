/**
 * How the client sends one HTTP request. A transport sends exactly what it is given,
 * follows no redirect (the client decides), reads the whole body within `signal` and
 * `maxBodyBytes`, and reports failures as {@link TransportError}s. Two ship with the
 * package: {@link createFetchTransport} (ky over the platform's fetch, the default) and
 * {@link createNodeHttpTransport} (Node's own http/https, which a short-lived CLI starts
 * faster with).
 */
export interface HttpTransport {
  send(request: TransportRequest): Promise<TransportResponse>;
}

export interface TransportRequest {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  url: URL;
  headers: Readonly<Record<string, string>>;
  body?: string;
  /** Aborts the request, body included: the client's one overall deadline per request. */
  signal: AbortSignal;
  /** The largest body accepted; a longer one fails with kind "too-large" as soon as it is seen. */
  maxBodyBytes: number;
}

export interface TransportResponse {
  status: number;
  /** Header values by lower-case name (repeated headers joined with ", "). */
  headers: Readonly<Record<string, string>>;
  /** The whole body, as UTF-8 text. */
  body: string;
}

export type TransportFailure =
  /** `signal` fired (the deadline passed, or the caller gave up). */
  | "aborted"
  /** The body is longer than `maxBodyBytes`. */
  | "too-large"
  /** Connecting, TLS, or the connection failing midway; `cause` has the system error. */
  | "network";

export class TransportError extends Error {
  override readonly name = "TransportError";
  readonly kind: TransportFailure;
  constructor(kind: TransportFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/** `name: value` pairs from a fetch Headers object, with lower-case names. */
function headerRecord(headers: { forEach(fn: (value: string, key: string) => void): void }) {
  const record: Record<string, string> = {};
  headers.forEach((value, key) => {
    record[key.toLowerCase()] = value;
  });
  return record;
}

/**
 * The default transport for library users: ky (no retries, no timeout of its own: the
 * client's signal is the deadline) over the platform's fetch, or the `fetch` given. ky is
 * imported on the first request.
 */
export function createFetchTransport(options: { fetch?: typeof globalThis.fetch } = {}): HttpTransport {
  let ky: Promise<typeof import("ky").default> | undefined;
  return {
    async send(request) {
      ky ??= import("ky").then((module) => module.default);
      const http = await ky;
      let response: Response;
      try {
        response = await http(request.url, {
          method: request.method,
          headers: request.headers,
          ...(request.body === undefined ? {} : { body: request.body }),
          signal: request.signal,
          redirect: "manual",
          retry: 0,
          timeout: false,
          throwHttpErrors: false,
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        });
      } catch (error) {
        throw asTransportError(error, request.signal);
      }
      const body = await readBody(response, request);
      return { status: response.status, headers: headerRecord(response.headers), body };
    },
  };
}

async function readBody(response: Response, request: TransportRequest): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > request.maxBodyBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(request.maxBodyBytes);
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > request.maxBodyBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(request.maxBodyBytes);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof TransportError) throw error;
    throw asTransportError(error, request.signal);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function tooLarge(limit: number): TransportError {
  return new TransportError("too-large", `the body is longer than ${limit} bytes`);
}

/** A failure of fetch (or of reading its body) as a TransportError: aborted when the signal fired. */
function asTransportError(error: unknown, signal: AbortSignal): TransportError {
  if (error instanceof TransportError) return error;
  if (signal.aborted) return new TransportError("aborted", "the request was aborted", { cause: signal.reason });
  return new TransportError("network", error instanceof Error ? error.message : String(error), { cause: error });
}
