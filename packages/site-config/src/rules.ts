import { isAbsolute } from "node:path";
import { isDnsLabel } from "@nodekit/documents";

// nvkectl's config file: its types and the rules for each field, as plain functions. The zod
// schema (schema.ts) runs them in its refinements; a read runs them after the check generated
// from that schema (config.generated.ts) without loading zod (store.ts). Nothing here imports zod.

export const API_VERSION = "nvkectl.nvke.io/v1";
export const KIND = "Config";

/** A management plane the CLI can talk to (NV-8). */
export interface Site {
  /** A DNS-1123 label: how commands and `--site` name it. */
  name: string;
  /** The NVKE controller API, http:// or https://. */
  url: string;
  /** Absolute path of the site cluster's kubeconfig. */
  kubeconfig: string;
}

/** The content of nvkectl's config file. */
export interface SiteConfig {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  /** The site commands use when `--site` is not given. */
  activeSite?: string;
  sites: Site[];
}

/** Why a site name is not acceptable, or undefined when it is. */
export function checkSiteName(name: string): string | undefined {
  if (!isDnsLabel(name)) {
    return 'must be a DNS-1123 label: lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63 characters';
  }
  return undefined;
}

/** Why a site URL is not acceptable, or undefined when it is. */
export function checkSiteUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an http:// or https:// URL, e.g. https://nvke.example.com";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return "must be an http:// or https:// URL";
  if (parsed.hostname === "") return "must name a host";
  // The config file is not a place for secrets; the CLI authenticates with a minted token.
  if (parsed.username !== "" || parsed.password !== "") return "must not carry a user name or password";
  return undefined;
}

/** Why a kubeconfig path is not acceptable in the file, or undefined when it is. */
export function checkKubeconfigPath(path: string): string | undefined {
  if (path === "") return "must not be empty";
  if (!isAbsolute(path)) return "must be an absolute path";
  return undefined;
}

/** The rule of each field of a site: the schema refines each field with it. */
export const SITE_FIELD_RULES: Readonly<Record<keyof Site, (value: string) => string | undefined>> = {
  name: checkSiteName,
  url: checkSiteUrl,
  kubeconfig: checkKubeconfigPath,
};

/** A problem of the file as a whole: where, and what. */
export interface ConfigIssue {
  path: Array<string | number>;
  message: string;
}

/**
 * The rules across fields: site names are unique, and `activeSite` names a site. Takes any
 * value, since the schema runs it even when other fields are invalid (so that one pass reports
 * everything): whatever parts are well-formed are read, the rest is left to the schema.
 */
export function crossFieldIssues(config: unknown): ConfigIssue[] {
  if (typeof config !== "object" || config === null || Array.isArray(config)) return [];
  const raw = config as { activeSite?: unknown; sites?: unknown };
  const sites: unknown[] = Array.isArray(raw.sites) ? raw.sites : [];
  const issues: ConfigIssue[] = [];
  const seen = new Map<string, number>();
  sites.forEach((site, index) => {
    const name = typeof site === "object" && site !== null ? (site as { name?: unknown }).name : undefined;
    if (typeof name !== "string") return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, index);
    else
      issues.push({
        path: ["sites", index, "name"],
        message: `is already the name of sites[${first}]; site names are unique`,
      });
  });
  if (typeof raw.activeSite === "string" && !seen.has(raw.activeSite)) {
    const known = [...seen.keys()];
    issues.push({
      path: ["activeSite"],
      message:
        known.length === 0
          ? "names a site, but no site is configured"
          : `is not the name of a configured site (${known.join(", ")})`,
    });
  }
  return issues;
}

/**
 * The configuration with its fields in the file's order (the schema's): what nvkectl writes,
 * and the order the schema gives them back in.
 */
export function orderedConfig(config: SiteConfig): SiteConfig {
  const { apiVersion, kind, activeSite } = config;
  const sites = config.sites.map((site) => ({ name: site.name, url: site.url, kubeconfig: site.kubeconfig }));
  return activeSite === undefined ? { apiVersion, kind, sites } : { apiVersion, kind, activeSite, sites };
}

/** A configuration with no sites: what a missing file means. */
export function emptyConfig(): SiteConfig {
  return { apiVersion: API_VERSION, kind: KIND, sites: [] };
}
