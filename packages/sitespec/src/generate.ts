/**
 * `@nodekit/sitespec/generate`: hosts CSV → site spec YAML, without the zod schema that
 * reading a site spec back needs. It is what `nvkectl sitespec generate` loads, so that
 * command does not pay for zod at start-up (≈45 ms here). The main entry exports all of it too.
 */
export { DEFAULT_AGENT_PORT, SITE_SPEC_API_VERSION, SITE_SPEC_KIND } from "./constants.ts";
export {
  HOSTS_CSV_COLUMNS,
  type Host,
  type ParsedHosts,
  type ParseHostsCsvOptions,
  parseHostsCsv,
} from "./hosts-csv.ts";
export type { SiteSpec, SiteSpecHost } from "./schema.ts";
export {
  type BuildSiteSpecOptions,
  buildSiteSpec,
  type GeneratedSiteSpec,
  type GenerateSiteSpecOptions,
  generateSiteSpec,
  type RenderSiteSpecOptions,
  renderSiteSpec,
} from "./site-spec.ts";
