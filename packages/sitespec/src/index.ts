export { DEFAULT_AGENT_PORT, SITE_SPEC_API_VERSION, SITE_SPEC_KIND } from "./constants.ts";
export { errorCodes as siteSpecErrorCodes } from "./errors.ts";
export {
  HOSTS_CSV_COLUMNS,
  type Host,
  type ParsedHosts,
  type ParseHostsCsvOptions,
  parseHostsCsv,
} from "./hosts-csv.ts";
export { type ParsedSiteSpec, type ParseSiteSpecOptions, parseSiteSpec } from "./parse-site-spec.ts";
export { type ReadSiteSpecOptions, readSiteSpec } from "./read.ts";
export type { SiteSpec, SiteSpecHost } from "./schema.ts";
export { SiteSpecHostSchema, type SiteSpecInput, SiteSpecSchema } from "./schema.ts";
export {
  type BuildSiteSpecOptions,
  buildSiteSpec,
  type GeneratedSiteSpec,
  type GenerateSiteSpecOptions,
  generateSiteSpec,
  type RenderSiteSpecOptions,
  renderSiteSpec,
} from "./site-spec.ts";
