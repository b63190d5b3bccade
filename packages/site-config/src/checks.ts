import { isAbsolute } from "node:path";
import { isDnsLabel } from "@nodekit/documents/names";

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

/** A configuration with no sites: what a missing file means. */
export function emptyConfig(): SiteConfig {
  return { apiVersion: API_VERSION, kind: KIND, sites: [] };
}

const CONFIG_KEYS = new Set(["apiVersion", "kind", "activeSite", "sites"]);
const SITE_KEYS = new Set(["name", "url", "kubeconfig"]);

function plainObject(value: unknown, known: ReadonlySet<string>): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.keys(value).every((key) => known.has(key)) && !Object.hasOwn(value, "__proto__");
}

function isSite(value: unknown): value is Site {
  return (
    plainObject(value, SITE_KEYS) &&
    typeof value.name === "string" &&
    checkSiteName(value.name) === undefined &&
    typeof value.url === "string" &&
    checkSiteUrl(value.url) === undefined &&
    typeof value.kubeconfig === "string" &&
    checkKubeconfigPath(value.kubeconfig) === undefined
  );
}

/**
 * True only when `siteConfigSchema` (schema.ts) accepts `value` and returns it unchanged
 * (no default filled in): a valid file is then read without loading zod, and anything
 * else goes to the full check with its problems. checks.test.ts holds the two equal.
 */
export function isSiteConfig(value: unknown): value is SiteConfig {
  if (!plainObject(value, CONFIG_KEYS)) return false;
  if (value.apiVersion !== API_VERSION || value.kind !== KIND) return false;
  if (!Array.isArray(value.sites) || !value.sites.every(isSite)) return false;
  const names = new Set((value.sites as Site[]).map((site) => site.name));
  if (names.size !== value.sites.length) return false;
  return value.activeSite === undefined || (typeof value.activeSite === "string" && names.has(value.activeSite));
}
