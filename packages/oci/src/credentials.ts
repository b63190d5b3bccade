import { readFile as fsReadFile } from "node:fs/promises";
import { homedir as osHomedir } from "node:os";
import { join } from "node:path";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";

/** A user name and password (or token used as one) for one registry. */
export interface Credential {
  readonly username: string;
  readonly password: string;
}

/** Where credentials come from: asked once per registry host (`host[:port]`). */
export interface CredentialStore {
  get(registry: string): Promise<Credential | undefined>;
}

export interface CredentialFileOptions {
  /** Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Reads a file; `undefined` when it does not exist. Default: node:fs. */
  readFile?: (path: string) => Promise<string | undefined>;
  /** Default os.homedir(). */
  homedir?: string;
}

export interface EnvCredentialNames {
  username: string;
  password: string;
  /** When this variable is set, the credential is offered only to the registry it names. */
  registry?: string;
}

/** The default names {@link envCredentials} reads. */
export const DEFAULT_ENV_CREDENTIAL_NAMES: EnvCredentialNames = {
  username: "NODEKIT_REGISTRY_USERNAME",
  password: "NODEKIT_REGISTRY_PASSWORD",
  registry: "NODEKIT_REGISTRY_HOST",
};

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await fsReadFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** `https://host:5000/v1/` and `host:5000` name the same registry. */
function normalizeRegistry(key: string): string {
  return key.replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, "");
}

function invalidFile(path: string, why: string): UserError {
  return new UserError(errorCodes.OCI_CREDENTIALS_INVALID, `${path} is not a registry credentials file`, {
    why,
    next: `Fix or remove ${path}; it must be JSON with an "auths" object mapping registry hosts to {"auth": base64("user:password")}.`,
    facts: { file: path },
  });
}

/**
 * Parse a docker-style config (`~/.docker/config.json`, helm's `registry/config.json`):
 * `auths` entries with `auth` (base64 of `user:password`) or `username` and `password`.
 * Entries that hold only an identity token or defer to a credential helper give nothing.
 */
export function parseAuthsFile(text: string, path: string): Map<string, Credential> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidFile(path, "it is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw invalidFile(path, "it is not a JSON object");
  const auths = (parsed as { auths?: unknown }).auths;
  const out = new Map<string, Credential>();
  if (auths === undefined) return out;
  if (typeof auths !== "object" || auths === null || Array.isArray(auths))
    throw invalidFile(path, '"auths" is not an object');
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    if (typeof entry !== "object" || entry === null)
      throw invalidFile(path, `auths[${JSON.stringify(key)}] is not an object`);
    const { auth, username, password } = entry as Record<string, unknown>;
    let credential: Credential | undefined;
    if (typeof auth === "string" && auth !== "") {
      const decoded = Buffer.from(auth, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon <= 0) throw invalidFile(path, `auths[${JSON.stringify(key)}].auth is not base64 of "user:password"`);
      credential = { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    } else if (typeof username === "string" && typeof password === "string" && username !== "") {
      credential = { username, password };
    }
    if (credential !== undefined) out.set(normalizeRegistry(key), credential);
  }
  return out;
}

/**
 * The docker-style config that docker and helm read (`{"auths":{"host":{"auth":base64("user:password")}}}`),
 * for these registry hosts: what {@link parseAuthsFile} reads back.
 */
export function formatAuthsFile(credentials: Readonly<Record<string, Credential>>): string {
  const auths = Object.fromEntries(
    Object.entries(credentials).map(([registry, { username, password }]) => [
      normalizeRegistry(registry),
      { auth: Buffer.from(`${username}:${password}`, "utf8").toString("base64") },
    ]),
  );
  return `${JSON.stringify({ auths }, null, 2)}\n`;
}

/** The files docker and helm keep registry logins in, in the order they are consulted. */
export function credentialFilePaths(options: Pick<CredentialFileOptions, "env" | "homedir"> = {}): string[] {
  const env = options.env ?? process.env;
  const home = options.homedir ?? osHomedir();
  const docker = join(env.DOCKER_CONFIG || join(home, ".docker"), "config.json");
  const helm =
    env.HELM_REGISTRY_CONFIG || join(env.XDG_CONFIG_HOME || join(home, ".config"), "helm", "registry", "config.json");
  return [docker, helm];
}

/** Credentials from docker's config (`$DOCKER_CONFIG` or `~/.docker`) and then helm's registry config. */
export function configFileCredentials(options: CredentialFileOptions = {}): CredentialStore {
  const read = options.readFile ?? readIfExists;
  let loaded: Promise<Map<string, Credential>[]> | undefined;
  return {
    async get(registry) {
      loaded ??= Promise.all(
        credentialFilePaths(options).map(async (path) => {
          const text = await read(path);
          return text === undefined ? new Map<string, Credential>() : parseAuthsFile(text, path);
        }),
      );
      for (const file of await loaded) {
        const found = file.get(registry);
        if (found !== undefined) return found;
      }
      return undefined;
    },
  };
}

/** A credential from the environment (never argv): by default NODEKIT_REGISTRY_USERNAME / _PASSWORD. */
export function envCredentials(
  env: NodeJS.ProcessEnv = process.env,
  names: EnvCredentialNames = DEFAULT_ENV_CREDENTIAL_NAMES,
): CredentialStore {
  return {
    async get(registry) {
      const username = env[names.username];
      const password = env[names.password];
      if (!username || password === undefined) return undefined;
      const only = names.registry === undefined ? undefined : env[names.registry];
      if (only && normalizeRegistry(only) !== registry) return undefined;
      return { username, password };
    },
  };
}

/** The first store that has a credential for the registry wins. */
export function chainCredentials(...stores: CredentialStore[]): CredentialStore {
  return {
    async get(registry) {
      for (const store of stores) {
        const found = await store.get(registry);
        if (found !== undefined) return found;
      }
      return undefined;
    },
  };
}

/** No credentials: every request is anonymous. */
export const anonymous: CredentialStore = { get: async () => undefined };

/** The environment first, then docker's and helm's config files. */
export function defaultCredentials(options: CredentialFileOptions = {}): CredentialStore {
  return chainCredentials(envCredentials(options.env ?? process.env), configFileCredentials(options));
}
