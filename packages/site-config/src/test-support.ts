import fc from "fast-check";
import { API_VERSION, KIND, type SiteConfig } from "./rules.ts";

/**
 * Site configurations for property tests: up to six sites from `site` with unique names, and
 * the active site one of them (or none, or a name no site has, which is left out).
 */
export function configsOf(site: fc.Arbitrary<SiteConfig["sites"][number]>): fc.Arbitrary<SiteConfig> {
  return fc.uniqueArray(site, { selector: (s) => s.name, maxLength: 6 }).chain((sites) =>
    fc.option(fc.constantFrom(...sites.map((s) => s.name), "x"), { nil: undefined }).map((active) => {
      const config: SiteConfig = { apiVersion: API_VERSION, kind: KIND, sites };
      if (active !== undefined && sites.some((s) => s.name === active)) config.activeSite = active;
      return config;
    }),
  );
}
