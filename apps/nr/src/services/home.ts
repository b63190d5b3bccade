import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { type LocatedDocument, readInputFile, readYamlDocuments, validateDocument } from "@nodekit/documents";
import { invalidInput, UserError } from "@nodekit/errors";
import * as z from "zod";
import { errorCodes } from "../errors.ts";

/**
 * Where nr keeps what it owns on this machine: `$NR_HOME`, else `~/.nr`. `bin/` holds the
 * companion tools it installed (keep it on PATH), `state.json` the registration's
 * checkpoints, `config.yaml` the API URL, token and offline pins, `run/` the files a run
 * hands to the tools it calls (manifests, the one-time peering kubeconfig).
 */
export interface NrPaths {
  home: string;
  bin: string;
  state: string;
  config: string;
  run: string;
}

export function nrPaths(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): NrPaths {
  const given = env.NR_HOME;
  const home = given ? resolve(cwd, given) : join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), ".nr");
  return {
    home,
    bin: join(home, "bin"),
    state: join(home, "state.json"),
    config: join(home, "config.yaml"),
    run: join(home, "run"),
  };
}

/** `~/.nr/bin` as users write it, for messages. */
export function displayPath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME;
  return home && path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

const ConfigSchema = z.strictObject({
  /** The NodeRings API's base URL (--api-url and NR_API_URL win). */
  apiUrl: z.url({ error: "must be a URL such as https://api.noderings.io" }).optional(),
  /** The NodeRings API token (NR_API_TOKEN wins). The file must then be mode 0600. */
  token: z.string().min(1, "must not be empty").optional(),
  /** The pins `--offline` uses instead of the shipped defaults (a `tools:` map, as in a pin set). */
  pins: z.unknown().optional(),
});
type NrConfig = z.infer<typeof ConfigSchema>;

export interface LoadedNrConfig {
  path: string;
  exists: boolean;
  config: NrConfig;
  /** The document, so that problems in its pins section keep their lines. */
  document: LocatedDocument | undefined;
}

/**
 * Reads `~/.nr/config.yaml` (absent: empty). Problems are NR_CONFIG_INVALID with their
 * lines, never quoting a value that may be the token. A file holding a token that others
 * can read is NR_CONFIG_INSECURE, as ssh refuses a readable private key.
 */
export async function loadNrConfig(paths: NrPaths): Promise<LoadedNrConfig> {
  let text: string;
  let mode: number;
  try {
    [text, mode] = await Promise.all([
      readInputFile(paths.config, { what: "nr's config" }).then((bytes) => bytes.toString("utf8")),
      stat(paths.config).then((s) => s.mode & 0o777),
    ]);
  } catch (error) {
    if (error instanceof UserError) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      return { path: paths.config, exists: false, config: {}, document: undefined };
    }
    throw new UserError(errorCodes.NR_CONFIG_INVALID, `cannot read ${paths.config}`, {
      why: (error as NodeJS.ErrnoException).code ?? String(error),
      next: "make it a file you can read",
    });
  }
  const read = readYamlDocuments(text, { source: paths.config, maxDocuments: 1, fileKind: "nr's config file" });
  const document = read.documents[0];
  const problems =
    read.problems.length > 0 || document === undefined || document.value === null
      ? read.problems
      : validateDocument(ConfigSchema, document, { source: paths.config }).problems;
  if (problems.length > 0) {
    throw invalidInput(errorCodes.NR_CONFIG_INVALID, paths.config, problems, `fix ${paths.config}`, "nothing was sent");
  }
  const config = document === undefined || document.value === null ? {} : ConfigSchema.parse(document.value);
  if (config.token !== undefined && (mode & 0o077) !== 0) {
    throw new UserError(
      errorCodes.NR_CONFIG_INSECURE,
      `${paths.config} holds the API token but its mode is ${mode.toString(8).padStart(4, "0")}; it was not used`,
      {
        why: "a file holding a token must be readable by its owner only",
        next: `chmod 600 ${paths.config}`,
        facts: { config: paths.config },
      },
    );
  }
  return { path: paths.config, exists: true, config, document };
}

export interface ApiEndpoint {
  url: string;
  /** Where the URL came from, for messages. */
  urlFrom: "--api-url" | "NR_API_URL" | "config";
  token: string | undefined;
  tokenFrom: "NR_API_TOKEN" | "config" | undefined;
}

/** The API URL (`--api-url`, else NR_API_URL, else the config file) and token (NR_API_TOKEN, else the config file). Never guessed. */
export function apiEndpoint(
  options: { apiUrl?: string | undefined },
  config: LoadedNrConfig,
  env: NodeJS.ProcessEnv = process.env,
): ApiEndpoint {
  const url = options.apiUrl ?? env.NR_API_URL ?? config.config.apiUrl;
  if (url === undefined || url === "") {
    throw new UserError(errorCodes.NR_API_URL_MISSING, "no NodeRings API URL was given; nothing was sent", {
      why: `nr never guesses which service to register with`,
      next: `give it with --api-url URL, the NR_API_URL environment variable, or apiUrl in ${config.path}`,
    });
  }
  const urlFrom = options.apiUrl !== undefined ? "--api-url" : env.NR_API_URL ? "NR_API_URL" : "config";
  const envToken = env.NR_API_TOKEN?.trim();
  const token = envToken ? envToken : config.config.token;
  const tokenFrom = envToken ? "NR_API_TOKEN" : config.config.token !== undefined ? "config" : undefined;
  return { url, urlFrom, token, tokenFrom };
}
