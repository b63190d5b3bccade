import { Readable } from "node:stream";
import type { HttpLibrary, RequestContext, ResponseContext } from "@kubernetes/client-node";
import { abortableSleep } from "@nodekit/http";
import type { Dispatcher } from "undici";

/** The two libraries {@link kubeHttpLibrary} works with, loaded by `connect` on first use. */
export interface TransportModules {
  k8s: Pick<typeof import("@kubernetes/client-node"), "Observable" | "ResponseContext">;
  undici: Pick<typeof import("undici"), "getGlobalDispatcher">;
}

export interface RetryOptions {
  /**
   * How long one call may take, its retries and their waits included (--request-timeout): a
   * wait that would end past it is not begun, and the last answer is the caller's.
   */
  timeoutMs: number;
  /** How many times one call is sent again after an answer that asks for it (default 5). */
  retries?: number;
  /** Waits (tests pass a fake clock; default setTimeout, cut short when the call is aborted). */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  now?: () => number;
}

/** How many times a call is sent again by default: a few, as the API server's own 429s need. */
const DEFAULT_RETRIES = 5;

/**
 * The HTTP library the client-node API clients of `connect` send with: undici's
 * `Dispatcher.request` over the dispatcher client-node prepared for the kubeconfig (its TLS
 * settings and client certificate; one for all the requests of a cluster and user, kept by
 * `keepConnections`), or undici's global one when it needs none. Two habits
 * of kubectl's (client-go's) that client-node's own fetch-based library lacks:
 *
 * - An answer 429, or 5xx, with `Retry-After: N` seconds is sent again after N seconds, a few
 *   times, within the call's timeout: the API server answers 429 "storage is (re)initializing"
 *   for a resource whose CRD has just been Established, and asks to be asked again.
 * - Any port kubectl reaches is reached: fetch refuses the ports the browser standard calls
 *   unsafe (6000, 10080, …) with "bad port" before connecting, which kubectl never does.
 *
 * A transport error is thrown as undici reports it (its system code, ECONNREFUSED,
 * ENOTFOUND, a TLS code), which @nodekit/kube's classifyApiError reads.
 */
export function kubeHttpLibrary(modules: TransportModules, options: RetryOptions): HttpLibrary {
  const retries = options.retries ?? DEFAULT_RETRIES;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableSleep;
  const send = async (request: RequestContext): Promise<ResponseContext> => {
    const deadline = now() + options.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const response = await sendOnce(modules, request);
      const wait = retryAfterMs(response);
      if (wait === undefined || attempt >= retries || now() + wait >= deadline) return response;
      // The answer that asks to be asked again is not read: its connection is let go.
      await response.body.text().catch(() => "");
      await sleep(wait, request.getSignal());
    }
  };
  return { send: (request) => new modules.k8s.Observable(send(request)) };
}

/**
 * client-go's rule (`checkWait` in rest/request.go): an answer 429, or any 5xx, whose
 * Retry-After is a whole number of seconds, is to be sent again after that long. Without
 * Retry-After it is the caller's answer.
 */
export function retryAfterMs(response: Pick<ResponseContext, "httpStatusCode" | "headers">): number | undefined {
  const status = response.httpStatusCode;
  if (status !== 429 && (status < 500 || status > 599)) return undefined;
  const header = response.headers["retry-after"];
  if (header === undefined || !/^\s*\d+\s*$/.test(header)) return undefined;
  return Number.parseInt(header, 10) * 1000;
}

async function sendOnce(modules: TransportModules, request: RequestContext): Promise<ResponseContext> {
  const url = new URL(request.getUrl());
  const dispatcher: Dispatcher = request.getDispatcher() ?? modules.undici.getGlobalDispatcher();
  const body = request.getBody();
  if (body !== undefined && typeof body !== "string") {
    // FormData: no call of the Kubernetes API sends one.
    throw new TypeError("a request body other than a string is not supported");
  }
  const signal = request.getSignal();
  const answer = await dispatcher.request({
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    method: request.getHttpMethod().toString() as Dispatcher.HttpMethod,
    headers: request.getHeaders(),
    ...(body === undefined ? {} : { body }),
    ...(signal === undefined ? {} : { signal }),
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return new modules.k8s.ResponseContext(answer.statusCode, headers, {
    text: () => answer.body.text(),
    binary: async () => Buffer.from(await answer.body.arrayBuffer()),
    stream: () => Readable.toWeb(answer.body) as ReadableStream<Uint8Array>,
  });
}
