import { isAbsolute } from "node:path";
import { isDnsLabel } from "@nodekit/documents";
import * as z from "zod";

// nvkectl's config file: its types, the rules for each field, and the zod schema.

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

const refined = (check: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const message = check(value);
    if (message !== undefined) ctx.addIssue({ code: "custom", message });
  });

const siteSchema = z.strictObject({
  name: refined(checkSiteName),
  url: refined(checkSiteUrl),
  kubeconfig: refined(checkKubeconfigPath),
});

export const siteConfigSchema = z
  .strictObject(
    {
      apiVersion: z.literal(API_VERSION),
      kind: z.literal(KIND),
      activeSite: z.string().optional(),
      sites: z.array(siteSchema).default([]),
    },
    {
      error: (issue) =>
        issue.code === "invalid_type" && issue.input !== undefined
          ? "must be a mapping with apiVersion, kind and sites"
          : undefined,
    },
  )
  .superRefine(
    (config, ctx) => {
      // Runs even when other fields are invalid (`when` below), so that one pass reports
      // everything; hence the defensive reads of whatever parts are well-formed.
      if (typeof config !== "object" || config === null || Array.isArray(config)) return;
      const raw = config as { activeSite?: unknown; sites?: unknown };
      const sites: unknown[] = Array.isArray(raw.sites) ? raw.sites : [];
      const seen = new Map<string, number>();
      sites.forEach((site, index) => {
        const name = typeof site === "object" && site !== null ? (site as { name?: unknown }).name : undefined;
        if (typeof name !== "string") return;
        const first = seen.get(name);
        if (first === undefined) seen.set(name, index);
        else
          ctx.addIssue({
            code: "custom",
            path: ["sites", index, "name"],
            message: `is already the name of sites[${first}]; site names are unique`,
          });
      });
      if (typeof raw.activeSite === "string" && !seen.has(raw.activeSite)) {
        const known = [...seen.keys()];
        ctx.addIssue({
          code: "custom",
          path: ["activeSite"],
          message:
            known.length === 0
              ? "names a site, but no site is configured"
              : `is not the name of a configured site (${known.join(", ")})`,
        });
      }
    },
    { when: () => true },
  );
