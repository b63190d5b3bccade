import { type Problem, UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { checkKubeconfigPath, checkSiteName, checkSiteUrl, type Site, type SiteConfig } from "./rules.ts";

/** A site as `get-sites` shows it. */
export interface SiteListing extends Site {
  active: boolean;
}

export interface SetSiteOptions {
  /** Make this site the active one. The first site added becomes active without it. */
  activate?: boolean;
}

export interface SetSiteResult {
  config: SiteConfig;
  site: Site;
  /** False when a site of that name existed and was updated. */
  created: boolean;
  /** True when this call made the site active (it was not before). */
  activated: boolean;
}

/** Every problem with a site's fields, or none. */
export function checkSite(site: Site): Problem[] {
  const source = `site ${JSON.stringify(site.name)}`;
  const checks: Array<[keyof Site, string | undefined]> = [
    ["name", checkSiteName(site.name)],
    ["url", checkSiteUrl(site.url)],
    ["kubeconfig", checkKubeconfigPath(site.kubeconfig)],
  ];
  return checks.flatMap(([field, message]) =>
    message === undefined ? [] : [{ severity: "error" as const, source, path: [field], value: site[field], message }],
  );
}

/** Throws SITE_INVALID (InvalidInput) listing every bad field of the site. */
export function assertValidSite(site: Site): void {
  const problems = checkSite(site);
  if (problems.length > 0) {
    throw new UserError(
      errorCodes.SITE_INVALID,
      `site ${JSON.stringify(site.name)} is not valid; nothing was written`,
      {
        problems,
      },
    );
  }
}

/**
 * Add a site, or update the one with the same name; the other sites are kept as they were.
 * Throws SITE_INVALID (InvalidInput) listing every bad field.
 */
export function setSite(config: SiteConfig, site: Site, options: SetSiteOptions = {}): SetSiteResult {
  assertValidSite(site);
  const entry: Site = { name: site.name, url: site.url, kubeconfig: site.kubeconfig };
  const index = config.sites.findIndex((existing) => existing.name === site.name);
  const sites = index === -1 ? [...config.sites, entry] : config.sites.map((s, i) => (i === index ? entry : s));
  const activate = options.activate === true || config.sites.length === 0;
  const activated = activate && config.activeSite !== site.name;
  const next: SiteConfig = { ...config, sites };
  if (activate) next.activeSite = site.name;
  return { config: next, site: entry, created: index === -1, activated };
}

/** Make a configured site the active one. Throws SITE_NOT_FOUND (NotFound) for an unknown name. */
export function useSite(config: SiteConfig, name: string): { config: SiteConfig; site: Site } {
  const site = findSite(config, name);
  return { config: { ...config, activeSite: site.name }, site };
}

/**
 * Remove a site. When it was the active site no site is active afterwards, and
 * `wasActive` says so, so that the caller can tell the user.
 */
export function deleteSite(config: SiteConfig, name: string): { config: SiteConfig; site: Site; wasActive: boolean } {
  const site = findSite(config, name);
  const wasActive = config.activeSite === name;
  const next: SiteConfig = { ...config, sites: config.sites.filter((s) => s.name !== name) };
  if (wasActive) delete next.activeSite;
  return { config: next, site, wasActive };
}

/**
 * The site a command acts on: the override (`--site`) when given, else the active site.
 * Throws SITE_NOT_FOUND for an unknown override and NO_ACTIVE_SITE when neither names one
 * (both NotFound).
 */
export function resolveSite(config: SiteConfig, override?: string): Site {
  if (override !== undefined && override !== "") return findSite(config, override);
  if (config.activeSite !== undefined) return findSite(config, config.activeSite);
  const names = config.sites.map((s) => s.name);
  throw new UserError(errorCodes.NO_ACTIVE_SITE, "no site is active", {
    why: names.length === 0 ? "no site is configured yet" : `the configured sites are ${names.join(", ")}`,
    facts: { configured: names.length },
  });
}

/** The sites in file order, each marked active or not. */
export function listSites(config: SiteConfig): SiteListing[] {
  return config.sites.map((site) => ({ ...site, active: site.name === config.activeSite }));
}

function findSite(config: SiteConfig, name: string): Site {
  const site = config.sites.find((s) => s.name === name);
  if (site !== undefined) return site;
  const names = config.sites.map((s) => s.name);
  throw new UserError(errorCodes.SITE_NOT_FOUND, `site ${JSON.stringify(name)} is not configured`, {
    why: names.length === 0 ? "no site is configured yet" : `the configured sites are ${names.join(", ")}`,
    facts: { site: name, configured: names.length },
  });
}
