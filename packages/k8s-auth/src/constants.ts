/** A namespaced object: a ConfigMap or a ServiceAccount. */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Where the NVKE controller's authentication ConfigMap may be, in the order it is searched
 * (NV-9, seed step 6): both names in `nke-controller`, then both in `cloud-workflow-engine`;
 * `nvke-auth-config` before `nke-auth-config`, which sites installed before the nvke rename
 * keep by pinning `apiAuth.configMap.name`.
 */
export const AUTH_CONFIGMAP_CANDIDATES: readonly ObjectRef[] = Object.freeze([
  { namespace: "nke-controller", name: "nvke-auth-config" },
  { namespace: "nke-controller", name: "nke-auth-config" },
  { namespace: "cloud-workflow-engine", name: "nvke-auth-config" },
  { namespace: "cloud-workflow-engine", name: "nke-auth-config" },
]);

/** The ConfigMap data key holding the audience the controller expects in bearer tokens. */
export const AUDIENCE_KEY = "audience";

/** The ServiceAccount whose tokens clients present to the controller API. */
export const CLIENT_SERVICE_ACCOUNT: ObjectRef = Object.freeze({ namespace: "nke-clients", name: "nke-client" });

/** Requested token lifetime. The API server accepts 600 s (10 minutes) and longer. */
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;

/** How long "no auth ConfigMap anywhere" is believed before the cluster is asked again. */
export const DEFAULT_AUTH_OFF_TTL_SECONDS = 300;

/** Per request to the Kubernetes API. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export function formatRef(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** What the cluster the tokens are minted on is called in messages. */
export const SITE_CLUSTER = "the site cluster";
