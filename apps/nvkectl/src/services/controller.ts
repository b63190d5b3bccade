import type { NvkeClient } from "@nodekit/nvke-api";
import { plainHttpWarning, type Site } from "@nodekit/site-config";

export interface OpenControllerOptions {
  site: Site;
  /** Token cache directory; default $XDG_CACHE_HOME/nvkectl/tokens (~/.cache/nvkectl/tokens). */
  cacheDir?: string;
  /** Every token handed out, so that the caller can keep it out of all output (Redactor.add). */
  onToken: (token: string) => void;
  /** Debug lines: auth decisions ("using cached token", "auth off", …) and each HTTP request. */
  debug: (message: string, fields?: Record<string, unknown>) => void;
  /** Warnings for stderr (a bearer token over plain HTTP). */
  warn: (message: string) => void;
  env?: Record<string, string | undefined>;
}

/**
 * A client for the site's NVKE controller API that authenticates as NV-9 says: the token
 * comes from @nodekit/k8s-auth (cached on disk; minted from the site cluster only when the
 * cache has none), a 401 drops the cached token and the request is retried once.
 *
 * Everything is imported here, when a command first needs the controller, and the
 * Kubernetes client library only when a token has to be minted: a read with a cached
 * token costs one HTTP request and no @kubernetes/client-node.
 */
export async function openController(options: OpenControllerOptions): Promise<NvkeClient> {
  const [{ createTokenProvider, defaultTokenCacheDir }, { createNvkeClient }] = await Promise.all([
    import("@nodekit/k8s-auth"),
    import("@nodekit/nvke-api"),
  ]);
  const { site } = options;
  const tokens = createTokenProvider({
    site: site.name,
    kubeconfig: site.kubeconfig,
    cacheDir: options.cacheDir ?? defaultTokenCacheDir(options.env ?? process.env),
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
    async token() {
      const token = await tokens.token();
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
    log: (line) => options.debug(line),
  });
}
