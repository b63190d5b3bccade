// Everything `@nodekit/sitespec/generate` has (hosts CSV → site spec YAML), plus reading a
// site spec back, which needs the zod schema.
export * from "./generate.ts";
export { type ParsedSiteSpec, type ParseSiteSpecOptions, parseSiteSpec } from "./parse-site-spec.ts";
export { SiteSpecHostSchema, type SiteSpecInput, SiteSpecSchema } from "./schema.ts";
