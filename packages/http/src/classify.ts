import { UserError, type UserErrorOptions } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";

/** What went wrong below the answer: each class is one code of {@link errorCodes}. */
export type TransportClass =
  | "unreachable"
  | "connection-lost"
  | "timeout"
  | "tls"
  | "redirect"
  | "too-large"
  | "bad-response"
  | "aborted";

const CODE_OF: Record<TransportClass, (typeof errorCodes)[keyof typeof errorCodes]> = {
  unreachable: errorCodes.HTTP_UNREACHABLE,
  "connection-lost": errorCodes.HTTP_CONNECTION_LOST,
  timeout: errorCodes.HTTP_TIMEOUT,
  tls: errorCodes.HTTP_TLS_UNTRUSTED,
  redirect: errorCodes.HTTP_REDIRECT_REFUSED,
  "too-large": errorCodes.HTTP_RESPONSE_TOO_LARGE,
  "bad-response": errorCodes.HTTP_BAD_RESPONSE,
  aborted: errorCodes.HTTP_ABORTED,
};

/** How far the exchange got: connecting, waiting for the headers, or reading the body. */
export type TransportStage = "connect" | "headers" | "body";

/**
 * A failure of `request()` below the answer. A UserError (its code says the class), with what
 * the clients need to say it in their own words: the class, the system error code when there
 * was one, how far the exchange got, and for `too-large` the limit.
 */
export class TransportError extends UserError {
  readonly class: TransportClass;
  readonly systemCode: string | undefined;
  readonly stage: TransportStage;
  readonly limitBytes: number | undefined;

  constructor(
    kind: TransportClass,
    message: string,
    options: UserErrorOptions & { systemCode?: string; stage?: TransportStage; limitBytes?: number } = {},
  ) {
    const { systemCode, stage, limitBytes, ...rest } = options;
    super(CODE_OF[kind], message, rest);
    this.class = kind;
    this.systemCode = systemCode;
    this.stage = stage ?? "connect";
    this.limitBytes = limitBytes;
  }
}

/** What {@link classifyTransportError} says of an error: its class, the system code, and why in words. */
export interface TransportFailure {
  class: TransportClass;
  /** ECONNREFUSED, EAI_AGAIN, CERT_HAS_EXPIRED, …, when the error carried one. */
  code: string | undefined;
  /** Why, in words: "connection refused", "the host name does not resolve", … */
  reason: string;
  stage: TransportStage;
  /** For too-large: the limit that was passed. */
  limitBytes: number | undefined;
}

const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "EAI_NODATA"]);
/** OpenSSL's verify codes (CERT_HAS_EXPIRED, UNABLE_TO_GET_ISSUER_CERT_LOCALLY, …) and Node's TLS errors. */
const TLS_CODE = /^(CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH)/;
const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const LOST_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
const UNREACHABLE_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  EHOSTUNREACH: "no route to the host",
  ENETUNREACH: "no route to the host",
  EHOSTDOWN: "the host is down",
  ETIMEDOUT: "connecting timed out",
};

/** The error and its causes, outermost first (fetch and undici wrap the system error; AggregateError holds several). */
function chainOf(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < 8; ) {
    chain.push(current);
    const aggregate = current instanceof AggregateError ? current.errors[0] : undefined;
    current = aggregate ?? current.cause;
  }
  return chain;
}

/** The system or TLS error code anywhere down the cause chain. */
function codeOf(chain: readonly Error[]): string | undefined {
  for (const link of chain) {
    const code = (link as { code?: unknown }).code;
    if (
      typeof code === "string" &&
      (/^(E[A-Z_]+|UND_ERR_[A-Z_]+|HPE_[A-Z_]+|Z_[A-Z_]+)$/.test(code) || TLS_CODE.test(code))
    ) {
      return code;
    }
  }
  return undefined;
}

function rootMessage(error: unknown): string {
  let current = error;
  for (let depth = 0; current instanceof Error && current.cause instanceof Error && depth < 8; depth++) {
    current = current.cause;
  }
  return current instanceof Error ? current.message : String(current);
}

/**
 * The one classifier of transport failures: any error a request can end with (a
 * TransportError, a Node system error, an error of fetch or undici wrapping one, a zlib or
 * HTTP parser error) as its class, its system code and a reason in words. The API clients map
 * the class to their own codes; nothing else in the workspace reads system error codes.
 */
export function classifyTransportError(error: unknown): TransportFailure {
  if (error instanceof TransportError) {
    return {
      class: error.class,
      code: error.systemCode,
      reason: error.systemCode === undefined ? error.message : reasonFor(error.systemCode, error),
      stage: error.stage,
      limitBytes: error.limitBytes,
    };
  }
  const chain = chainOf(error);
  const code = codeOf(chain);
  const failure = (kind: TransportClass, reason: string): TransportFailure => ({
    class: kind,
    code,
    reason,
    stage: "connect",
    limitBytes: undefined,
  });
  const names = new Set(chain.map((link) => link.name));
  if (code !== undefined && TLS_CODE.test(code)) return failure("tls", `${rootMessage(error)} (${code})`);
  if (names.has("TimeoutError") || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return failure("timeout", "no answer in time");
  }
  if (names.has("AbortError") || chain.some((link) => (link as { code?: unknown }).code === "ABORT_ERR")) {
    return failure("aborted", "the request was aborted");
  }
  if (code !== undefined && LOST_CODES.has(code)) return failure("connection-lost", reasonFor(code, error));
  if (code !== undefined && (code.startsWith("HPE_") || code.startsWith("Z_"))) {
    return failure("bad-response", reasonFor(code, error));
  }
  if (code !== undefined) return failure("unreachable", reasonFor(code, error));
  if (/socket hang up|other side closed|terminated/i.test(rootMessage(error))) {
    return failure("connection-lost", "the connection was closed before the whole answer");
  }
  return failure("unreachable", rootMessage(error));
}

function reasonFor(code: string, error: unknown): string {
  if (DNS_CODES.has(code)) return "the host name does not resolve";
  const unreachable = UNREACHABLE_REASONS[code];
  if (unreachable !== undefined) return unreachable;
  if (code === "ECONNRESET") return "the connection was reset";
  if (LOST_CODES.has(code)) return "the connection was closed before the whole answer";
  if (code.startsWith("HPE_")) return `the answer is not valid HTTP (${code})`;
  if (code.startsWith("Z_")) return `the answer's compressed body is corrupt: ${rootMessage(error)} (${code})`;
  if (TLS_CODE.test(code)) return `${rootMessage(error)} (${code})`;
  return code;
}

/** Whether the code says the host name did not resolve (for a next step about the URL's host). */
export function isDnsFailure(failure: TransportFailure): boolean {
  return failure.code !== undefined && DNS_CODES.has(failure.code);
}
