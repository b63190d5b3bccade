export { errorCodes as siteConfigErrorCodes } from "./errors.ts";
export { formatConfig, type ParseOptions, type ParseResult, parseConfig, validateConfig } from "./parse.ts";
export { isLoopbackHost, plainHttpWarning } from "./plain-http.ts";
export {
  API_VERSION,
  checkKubeconfigPath,
  checkSiteName,
  checkSiteUrl,
  emptyConfig,
  KIND,
  type Site,
  type SiteConfig,
} from "./rules.ts";
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
