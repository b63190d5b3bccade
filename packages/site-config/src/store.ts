import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { decodeUtf8, readInputFile } from "@nodekit/documents";
import { invalidInput, UserError } from "@nodekit/errors";
import { assertTrustedFile, ensurePrivateDir, type LockOptions, withFileLock, writeFileSafe } from "@nodekit/fs-safe";
import { assertKubeconfig } from "@nodekit/kube-calls";
import { isSiteConfigShape } from "./config.generated.ts";
import { errorCodes } from "./errors.ts";
import { crossFieldIssues, emptyConfig, orderedConfig, SITE_FIELD_RULES, type Site, type SiteConfig } from "./rules.ts";

// The YAML reader (js-yaml, with every problem's line) loads only for a file that is not the
// JSON nvkectl writes: one a person wrote or edited as YAML, or one with a problem to report;
// the zod schema only for JSON the check generated from it does not accept (config.generated.ts).
const parsing = () => import("./parse.ts");
const schema = () => import("./schema.ts");

/**
 * Where the config file is, from the environment. Everything has a real default, so
 * callers pass only what they want to control (tests pass a temporary HOME).
 */
export interface ConfigLocation {
  /** The environment to read NVKECTL_CONFIG, XDG_CONFIG_HOME and HOME from. Default: process.env. */
  env?: Record<string, string | undefined>;
  /** What a relative NVKECTL_CONFIG is resolved against. Default: process.cwd(). */
  cwd?: string;
  /** An explicit file path; wins over the environment. */
  path?: string;
  /** How {@link updateConfig} waits for another process changing the file (tests shorten it). */
  lock?: LockOptions;
}

export interface LoadedConfig {
  path: string;
  config: SiteConfig;
  /** False when there was no file (the configuration is then empty). */
  exists: boolean;
}

/** The file's permissions: it names clusters and credentials files, so only its owner reads it. */
export const CONFIG_FILE_MODE = 0o600;
export const CONFIG_DIR_MODE = 0o700;

/**
 * `NVKECTL_CONFIG` when set, else `$XDG_CONFIG_HOME/nvkectl/config.yaml`, else
 * `~/.config/nvkectl/config.yaml`. A relative XDG_CONFIG_HOME is ignored, as the XDG
 * base directory spec says.
 */
export function configPath(location: ConfigLocation = {}): string {
  const env = location.env ?? process.env;
  const cwd = location.cwd ?? process.cwd();
  if (location.path) return resolve(cwd, location.path);
  if (env.NVKECTL_CONFIG) return resolve(cwd, env.NVKECTL_CONFIG);
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".config");
  return join(base, "nvkectl", "config.yaml");
}

const WHAT = "the site configuration";

/**
 * Read the config file: the JSON nvkectl writes, or YAML a person wrote (JSON.parse first,
 * js-yaml for anything else). A missing file is an empty configuration. A file that is not
 * valid YAML (or not UTF-8 text) or breaks the schema is a CONFIG_INVALID user error
 * (InvalidInput) naming the file and every problem; such a file is never written over.
 * The file names the clusters tokens are minted for and the URLs they are sent to, so one
 * that another user could have changed (its owner or mode, or a directory above it) is
 * refused: FILE_UNSAFE or DIR_UNSAFE from @nodekit/fs-safe.
 */
export async function loadConfig(location: ConfigLocation = {}): Promise<LoadedConfig> {
  const path = configPath(location);
  await assertTrustedFile(path, { what: WHAT });
  let bytes: Buffer;
  try {
    bytes = await readInputFile(path, { what: WHAT });
  } catch (error) {
    if (error instanceof UserError) throw error;
    if (errorCode(error) === "ENOENT") return { path, config: emptyConfig(), exists: false };
    throw new UserError(errorCodes.CONFIG_UNREADABLE, `cannot read the site configuration ${path}`, {
      why: errorCode(error) ?? String(error),
      next: "make it a file you can read, or point NVKECTL_CONFIG at another file",
      cause: error,
    });
  }
  const decoded = decodeUtf8(bytes, { source: path });
  if (decoded.text === undefined) {
    throw invalidInput(errorCodes.CONFIG_INVALID, path, decoded.problems, [`save ${path} as UTF-8 text`]);
  }
  const text = decoded.text;
  const json = parseJson(text);
  if (json !== undefined) {
    const accepted = acceptedConfig(json.value);
    if (accepted !== undefined) return { path, config: accepted, exists: true };
    const checked = (await schema()).siteConfigSchema.safeParse(json.value);
    if (checked.success) return { path, config: checked.data as SiteConfig, exists: true };
  }
  const { parseConfig } = await parsing();
  const { config, problems } = parseConfig(text, { source: path });
  if (config === undefined) {
    throw invalidInput(errorCodes.CONFIG_INVALID, path, problems, [
      `fix ${path}, or remove it to start from an empty configuration (its sites are then forgotten)`,
    ]);
  }
  return { path, config, exists: true };
}

/**
 * Write the configuration atomically (a temporary file renamed over the old one, so
 * readers never see a torn file), mode 0600 whatever the old file's mode was, creating the
 * directory 0700. Never through a symbolic link, never into a directory another user owns
 * or may write to (@nodekit/fs-safe). Returns the path written. Use {@link updateConfig}
 * to change what is there: it holds the lock.
 */
export async function saveConfig(config: SiteConfig, location: ConfigLocation = {}): Promise<string> {
  const path = configPath(location);
  const { formatConfig, validateConfig } = await parsing();
  const problems = validateConfig(config, { source: `the configuration for ${path}` });
  if (problems.length > 0) throw invalidInput(errorCodes.CONFIG_INVALID, `the configuration for ${path}`, problems);
  await ensurePrivateDir(dirname(path), { mode: CONFIG_DIR_MODE, what: "the configuration directory" });
  await writeFileSafe(path, formatConfig(config), { mode: CONFIG_FILE_MODE, what: WHAT });
  return path;
}

/**
 * Load, change and save in one step, holding the file's lock (`config.yaml.lock`) from
 * before the load to after the write, so that commands run at the same time each see the
 * other's change: none is lost. `change` is one of the pure operations (setSite, useSite,
 * deleteSite) or anything returning `{ config }`; its result comes back with the path
 * written. Nothing is written when loading or the change fails. A lock left by a killed
 * process is taken over once stale (5 s); FILE_LOCKED when a live one holds it too long.
 */
export async function updateConfig<R extends { config: SiteConfig }>(
  change: (config: SiteConfig) => R,
  location: ConfigLocation = {},
): Promise<R & { path: string }> {
  const path = configPath(location);
  // The directory must exist (and be safe) for the lock to be made in it.
  await ensurePrivateDir(dirname(path), { mode: CONFIG_DIR_MODE, what: "the configuration directory" });
  return withFileLock(
    path,
    async () => {
      const loaded = await loadConfig({ ...location, path });
      const result = change(loaded.config);
      await saveConfig(result.config, { ...location, path });
      return { ...result, path };
    },
    { what: WHAT, ...location.lock },
  );
}

/**
 * A kubeconfig path as stored: absolute (resolved against `cwd`) and naming a file that
 * exists. Throws KUBECONFIG_NOT_FOUND (NotFound) otherwise.
 */
export async function resolveKubeconfig(file: string, options: { cwd?: string } = {}): Promise<string> {
  const path = resolve(options.cwd ?? process.cwd(), file);
  await assertKubeconfig(path);
  return path;
}

/**
 * What the schema (schema.ts) returns for `value`, when the check generated from it
 * (config.generated.ts) accepts its shape and it keeps the rules the schema refines it with
 * (rules.ts, the same functions): the same configuration, its fields in the schema's order.
 * Undefined otherwise: the schema then decides, and names every problem.
 */
export function acceptedConfig(value: unknown): SiteConfig | undefined {
  if (!isSiteConfigShape(value)) return undefined;
  const rules = Object.entries(SITE_FIELD_RULES) as Array<[keyof Site, (value: string) => string | undefined]>;
  for (const site of value.sites) {
    if (rules.some(([field, rule]) => rule(site[field]) !== undefined)) return undefined;
  }
  return crossFieldIssues(value).length === 0 ? orderedConfig(value) : undefined;
}

/** The value of a JSON text, or undefined when it is not JSON (YAML, or empty). */
function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined;
}
