import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ensurePrivateDir, writeFileSafe } from "@nodekit/fs-safe";
import type { Credential } from "@nodekit/oci";
import type { Redactor } from "@nodekit/process";

// helm reads registry logins only from a file (HELM_REGISTRY_CONFIG). When the release's
// registry credential comes from NODEKIT_REGISTRY_USERNAME / _PASSWORD, the install writes
// that file for helm for the length of the run, outside the plan: the plan (and so the dry
// run, the logs and -o json) names the file, never what is in it.

/** A helm registry config the install writes from the credentials release verify uses. */
export interface HelmRegistryLogin {
  /** What helm is given as HELM_REGISTRY_CONFIG: `<work dir>/helm-registry/config.json`. */
  path: string;
  /** Registry host → its credential (the environment's, else docker's or helm's file's). */
  auths: Readonly<Record<string, Credential>>;
}

/** The generated config's place under the install's work dir (the dry run shows the same path). */
export const helmRegistryConfigPath = (workDir: string) => join(workDir, "helm-registry", "config.json");

/**
 * The credentials for helm's pulls from these registries, in the order `release verify`
 * takes them: the environment's (NODEKIT_REGISTRY_USERNAME / _PASSWORD, only for
 * NODEKIT_REGISTRY_HOST when set) first, then docker's and helm's config files. Undefined
 * when the environment gives none of the hosts a credential: helm then reads the user's own
 * file as it is. Every password is registered with the redactor.
 */
export async function helmRegistryLogin(
  hosts: readonly string[],
  options: { env: NodeJS.ProcessEnv; workDir: string; redactor: Redactor },
): Promise<HelmRegistryLogin | undefined> {
  const { configFileCredentials, envCredentials } = await import("@nodekit/oci");
  const fromEnv = envCredentials(options.env);
  const fromFiles = configFileCredentials({
    env: options.env,
    ...(options.env.HOME ? { homedir: options.env.HOME } : {}),
  });
  const auths: Record<string, Credential> = {};
  let envGave = false;
  for (const host of new Set(hosts)) {
    const found = await fromEnv.get(host);
    if (found !== undefined) {
      envGave = true;
      auths[host] = found;
    }
  }
  if (!envGave) return undefined;
  for (const host of new Set(hosts)) {
    if (auths[host] !== undefined) continue;
    const found = await fromFiles.get(host);
    if (found !== undefined) auths[host] = found;
  }
  for (const { username, password } of Object.values(auths)) {
    options.redactor.add(password, "a registry password");
    options.redactor.add(Buffer.from(`${username}:${password}`, "utf8").toString("base64"), "a registry password");
  }
  return { path: helmRegistryConfigPath(options.workDir), auths };
}

/**
 * Removes the helm registry config a run killed with SIGKILL (no exit hook runs then) left in
 * the work dir: every real install run starts with this, whether or not it writes one itself,
 * so a credential outlives a killed run only until the next run. A link there is removed, not followed.
 */
export async function removeLeftoverRegistryConfig(workDir: string): Promise<void> {
  await rm(dirname(helmRegistryConfigPath(workDir)), { recursive: true, force: true });
}

export interface RegistryConfigHooks {
  /**
   * Arranges for `cleanup` (synchronous) to run if the process exits or is killed by a signal
   * (Ctrl-C) before the run ends; returns what undoes the arrangement. Default: signal-exit's onExit.
   */
  onExit?: (cleanup: () => void) => () => void;
}

/**
 * Runs `fn` with the login written where helm reads it: a fresh directory (0700; one left by a
 * killed run is replaced) holding the docker-format config (0600). The directory is removed
 * when `fn` settles, whether it succeeded or failed, and on exit or a signal before that.
 */
export async function withHelmRegistryConfig<T>(
  login: HelmRegistryLogin,
  fn: () => Promise<T>,
  hooks: RegistryConfigHooks = {},
): Promise<T> {
  const { formatAuthsFile } = await import("@nodekit/oci");
  const dir = dirname(login.path);
  await ensurePrivateDir(dirname(dir), { mode: 0o700, what: "the install's work directory" });
  await rm(dir, { recursive: true, force: true });
  const onExit = hooks.onExit ?? (await import("signal-exit")).onExit;
  const unhook = onExit(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  try {
    await ensurePrivateDir(dir, { mode: 0o700, what: "the helm registry config's directory" });
    await writeFileSafe(login.path, formatAuthsFile(login.auths), { mode: 0o600, what: "the helm registry config" });
    return await fn();
  } finally {
    unhook();
    await rm(dir, { recursive: true, force: true });
  }
}
