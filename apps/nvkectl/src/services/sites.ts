import { resolve } from "node:path";
import { UserError } from "@nodekit/errors";
import { defaultKubeconfig, type KubeTarget, kubeTarget } from "@nodekit/kube-calls";
import type { Site } from "@nodekit/site-config";
import {
  assertValidSite,
  type ConfigLocation,
  deleteSite,
  listSites,
  loadConfig,
  plainHttpWarning,
  resolveKubeconfig,
  resolveSite,
  type SetSiteResult,
  type SiteListing,
  setSite,
  updateConfig,
  useSite,
} from "@nodekit/site-config";

// One function per `nvkectl config` command: each loads the file and applies one pure
// operation; those that change the configuration save it. Each returns what its command prints.

export interface ConfigureSiteOptions extends ConfigLocation {
  name: string;
  url: string;
  /** The site cluster's kubeconfig as the user gave it; a relative path is resolved against `cwd`. */
  kubeconfig: string;
  /** Make it the active site (the first site added always is). */
  activate?: boolean;
}

export interface ConfigureSiteResult extends Omit<SetSiteResult, "config"> {
  path: string;
  /** Set when the URL sends a bearer token over plain HTTP to a non-loopback host. */
  warning?: string;
}

/** Add or update a site. Fails, writing nothing, when a field is invalid or the kubeconfig does not exist. */
export async function configureSite(options: ConfigureSiteOptions): Promise<ConfigureSiteResult> {
  const { name, url, activate, ...location } = options;
  // Bad values are reported before a missing kubeconfig, and both before the file is read.
  assertValidSite({ name, url, kubeconfig: resolve(location.cwd ?? process.cwd(), options.kubeconfig) });
  const kubeconfig = await resolveKubeconfig(options.kubeconfig, location);
  const { path, site, created, activated } = await updateConfig(
    (config) => setSite(config, { name, url, kubeconfig }, { activate: activate === true }),
    location,
  );
  const warning = plainHttpWarning(url);
  return { path, site, created, activated, ...(warning === undefined ? {} : { warning }) };
}

/** Make a configured site the active one. */
export async function activateSite(options: ConfigLocation & { name: string }): Promise<{ path: string; site: Site }> {
  const { name, ...location } = options;
  const { site, path } = await updateConfig((config) => useSite(config, name), location);
  return { path, site };
}

/** Forget a site; `wasActive` says that no site is active any more. */
export async function removeSite(
  options: ConfigLocation & { name: string },
): Promise<{ path: string; site: Site; wasActive: boolean }> {
  const { name, ...location } = options;
  const { site, wasActive, path } = await updateConfig((config) => deleteSite(config, name), location);
  return { path, site, wasActive };
}

/** Every configured site, marked active or not. Reads only. */
export async function readSites(
  location: ConfigLocation = {},
): Promise<{ path: string; activeSite?: string; sites: SiteListing[] }> {
  const { path, config } = await loadConfig(location);
  const sites = listSites(config);
  return config.activeSite === undefined ? { path, sites } : { path, activeSite: config.activeSite, sites };
}

/**
 * The site a command acts on: `site` (the `--site` override) when given, else the active
 * site. What every command that talks to a management plane starts with. Reads only.
 */
export async function currentSite(
  options: ConfigLocation & { site?: string | undefined } = {},
): Promise<{ path: string; site: Site }> {
  const { site: override, ...location } = options;
  const { path, config } = await loadConfig(location);
  return { path, site: resolveSite(config, override) };
}

/** Where the kubeconfig of a command that reads the site cluster comes from. */
export type KubeconfigOrigin = "site" | "KUBECONFIG" | "~/.kube/config";

/**
 * The kubeconfig a command that reads the site cluster uses (get providers, get kubeconfig,
 * version, install, uninstall, upgrade): the site's; with no site configured and no
 * `--site`, the one kubectl, helm and clusterctl would use: every file of `KUBECONFIG`'s
 * list that exists (the tools get the list as KUBECONFIG and merge it themselves), or
 * `~/.kube/config`.
 */
export async function siteKubeconfig(
  options: ConfigLocation & { site?: string | undefined; env: NodeJS.ProcessEnv; home: string },
): Promise<{ target: KubeTarget; from: KubeconfigOrigin; site?: Site }> {
  const { env, home, ...location } = options;
  try {
    const { site } = await currentSite(location);
    return { target: { kubeconfig: site.kubeconfig }, from: "site", site };
  } catch (error) {
    const noSite =
      error instanceof UserError &&
      error.code === "NO_ACTIVE_SITE" &&
      error.facts.configured === 0 &&
      (options.site === undefined || options.site === "");
    if (!noSite) throw error;
    const { files, from } = await defaultKubeconfig(env, home);
    return { target: kubeTarget(files), from };
  }
}
