// Importing this module does not load @kubernetes/client-node: only the functions that talk
// to the cluster import it, when they do.

export type { KubeconfigSource } from "@nodekit/kube";
export {
  CACHE_DIR_MODE,
  CACHE_FILE_MODE,
  cacheFilePath,
  defaultTokenCacheDir,
  MIN_REFRESH_MARGIN_MS,
  REFRESH_MARGIN_FRACTION,
} from "./cache.ts";
export {
  AUDIENCE_KEY,
  AUTH_CONFIGMAP_CANDIDATES,
  CLIENT_SERVICE_ACCOUNT,
  DEFAULT_AUTH_OFF_TTL_SECONDS,
  DEFAULT_EXPIRATION_SECONDS,
  MIN_EXPIRATION_SECONDS,
  type ObjectRef,
} from "./constants.ts";
export { type AudienceDiscovery, type Denial, type DiscoverOptions, discoverAudience } from "./discover.ts";
export { errorCodes as k8sAuthErrorCodes } from "./errors.ts";
export type { AuthEvent, AuthEventType, AuthLog } from "./events.ts";
export { type MintedToken, type MintOptions, mintToken } from "./mint.ts";
export { createTokenProvider, type TokenProvider, type TokenProviderOptions } from "./provider.ts";
