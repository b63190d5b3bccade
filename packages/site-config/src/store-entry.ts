// `@nodekit/site-config/store`: reading, changing and writing the config file, without the
// zod schema, which loads only for a file the fast check does not accept and for writes.
// A short-lived CLI imports this; everything is also in the package index.
export {
  API_VERSION,
  checkKubeconfigPath,
  checkSiteName,
  checkSiteUrl,
  emptyConfig,
  isSiteConfig,
  KIND,
  type Site,
  type SiteConfig,
} from "./checks.ts";
export { errorCodes as siteConfigErrorCodes } from "./errors.ts";
export { isLoopbackHost, plainHttpWarning } from "./plain-http.ts";
export {
  assertValidSite,
  checkSite,
  deleteSite,
  listSites,
  resolveSite,
  type SetSiteOptions,
  type SetSiteResult,
  type SiteListing,
  setSite,
  useSite,
} from "./sites.ts";
export {
  CONFIG_DIR_MODE,
  CONFIG_FILE_MODE,
  type ConfigLocation,
  configPath,
  type LoadedConfig,
  loadConfig,
  resolveKubeconfig,
  saveConfig,
  updateConfig,
} from "./store.ts";
