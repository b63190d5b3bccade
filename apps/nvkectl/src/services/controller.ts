import { traceStartup } from "@nodekit/cli-kit";
import type { DirLookups } from "@nodekit/fs-safe";
import { createTransport } from "@nodekit/http";
import { createTokenProvider, defaultTokenCacheDir } from "@nodekit/k8s-auth";
import { createNvkeClient, type NvkeClient } from "@nodekit/nvke-api";
import { plainHttpWarning, type Site } from "@nodekit/site-config";

export { dirLookups } from "@nodekit/fs-safe";
// What a command needs to reach the controller, in one module (each module is one more
// file to load on every read): the connection flags and the client.
export { connectionOptions } from "./connection.ts";

export interface OpenControllerOptions {
  site: Site;
  /** Token cache directory; default $XDG_CACHE_HOME/nvkectl/tokens (~/.cache/nvkectl/tokens). */
  cacheDir?: string;
  /** The token cache directories' answers, shared by the sites of one command (fs-safe's dirLookups). */
  dirLookups?: DirLookups;
  /** Every token handed out, so that the caller can keep it out of all output (Redactor.add). */
  onToken: (token: string) => void;
  /** Debug lines: auth decisions ("using cached token", "auth off", …) and each HTTP request. */
  debug: (message: string, fields?: Record<string, unknown>) => void;
  /** Warnings for stderr (a bearer token over plain HTTP). */
  warn: (message: string) => void;
  /** One deadline per request, headers and body (--request-timeout). */
  requestTimeoutMs?: number;
  /** PEM text of the CA(s) an https:// controller's certificate must chain to (--certificate-authority). */
  certificateAuthority?: string;
  /** The longest answer read (NVKECTL_MAX_RESPONSE_MB). */
  maxResponseBytes?: number;
  /** Ends every request: the whole command's deadline (--timeout of --wait/--watch). */
  signal?: AbortSignal;
  env?: Record<string, string | undefined>;
}

/**
 * A client for the site's NVKE controller API that authenticates as NV-9 says: the token
 * comes from @nodekit/k8s-auth (cached on disk; minted from the site cluster only when the
 * cache has none), a 401 drops the cached token and the request is retried once.
 *
 * This module is imported when a command first needs the controller (its imports are static
 * so that the bundle keeps only what it uses), the Kubernetes client library only when a
 * token has to be minted: a read with a cached
 * token costs one HTTP request through @nodekit/http, on Node's own http module (not fetch,
 * whose undici a short-lived process pays ≈ 30 ms for), and loads neither @kubernetes/client-node nor zod.
 */
export async function openController(options: OpenControllerOptions): Promise<NvkeClient> {
  const { site } = options;
  const tokens = createTokenProvider({
    site: site.name,
    kubeconfig: site.kubeconfig,
    cacheDir: options.cacheDir ?? defaultTokenCacheDir(options.env ?? process.env),
    ...(options.dirLookups === undefined ? {} : { dirLookups: options.dirLookups }),
    onToken: options.onToken,
    // A token cache another user could reach is worth saying without -v: it is not used.
    log: (event) =>
      event.type === "cache-unsafe"
        ? options.warn(event.message)
        : options.debug(event.message, { event: event.type, ...event.fields }),
  });
  let warned = false;
  return createNvkeClient({
    baseUrl: site.url,
    transport: createTransport({ ca: options.certificateAuthority }),
    ...(options.requestTimeoutMs === undefined ? {} : { timeoutMs: options.requestTimeoutMs }),
    ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    async token() {
      const token = await tokens.token();
      traceStartup("token read");
      if (token !== undefined && !warned) {
        warned = true;
        const warning = plainHttpWarning(site.url);
        if (warning !== undefined) options.warn(warning);
      }
      return token;
    },
    onUnauthorized: async () => {
      options.debug("the controller answered 401 Unauthorized; dropping the cached token and retrying once");
      await tokens.invalidate();
    },
    log: (line) => {
      traceStartup("controller answered");
      options.debug(line);
    },
  });
}
