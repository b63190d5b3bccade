export { ApiError } from "./api-error.ts";
export { AUDIENCE_KEY, AUTH_CONFIGMAP_CANDIDATES, type AuthConfig, Authenticator } from "./auth.ts";
export { CONTROL_PLANE_POOL } from "./controller.ts";
export {
  type ChaosMode,
  type EmulatorOptions,
  type RunningEmulator,
  type SeedOptions,
  startEmulator,
  type TenantApiServerInfo,
} from "./emulator.ts";
export { renderTenantKubeconfig, type TenantKubeconfigInput } from "./kubeconfig.ts";
export {
  type ConfigMapRead,
  connectSite,
  kubeconfigSecretName,
  type SiteCluster,
  type TokenReviewResult,
} from "./site.ts";
export { DEFAULT_TIMING, type EmulatorState, type Timing } from "./state.ts";
export {
  planTenantApiServers,
  type TenantApiServer,
  type TenantApiServers,
  type TenantPlan,
  type TestenvTenantApiServersOptions,
  tenantDirName,
  testenvTenantApiServers,
} from "./tenants.ts";
