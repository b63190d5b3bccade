import { readdir, rm, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { type LocatedDocument, readInputFile, readYamlDocuments, validateDocument } from "@nodekit/documents";
import { invalidInput, UserError } from "@nodekit/errors";
import { assertTrustedDir, assertTrustedFile, ensurePrivateDir } from "@nodekit/fs-safe";
import * as z from "zod";
import { errorCodes } from "../errors.ts";

/**
 * Where nr keeps what it owns on this machine: `$NR_HOME`, else `~/.nr`. `bin/` holds the
 * companion tools it installed (keep it on PATH), `tools.json` the digest of each (checked
 * before one is used), `state.json` the registration's checkpoints, `config.yaml` the API
 * URL, token and offline pins, `run/` the files a run hands to the tools it calls
 * (manifests, the one-time peering kubeconfig).
 */
export interface NrPaths {
  home: string;
  bin: string;
  tools: string;
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
    tools: join(home, "tools.json"),
    state: join(home, "state.json"),
    config: join(home, "config.yaml"),
    run: join(home, "run"),
  };
}

/**
 * The one lock of `nr cluster register` on this machine, whatever NR_HOME: two states on one
 * VM must never register it twice at once (they would install the same k3s and Liqo). In
 * `/run/nr/` for root, who registers: /run is root's, on a tmpfs cleared at boot (a lock
 * never outlives a reboot), and nr makes `/run/nr` its own 0700 directory, where the
 * world-writable /run/lock (/var/lock) would let another user plant or hold it. For another
 * user, in their own runtime directory (XDG_RUNTIME_DIR). `NR_LOCK_DIR` names another
 * directory (tests, a sandbox): every state run with the same one shares the lock.
 */
export function nrLockPath(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const dir = env.NR_LOCK_DIR
    ? resolve(cwd, env.NR_LOCK_DIR)
    : uid === 0
      ? "/run/nr"
      : env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR)
        ? join(env.XDG_RUNTIME_DIR, "nr")
        : join(tmpdir(), `nr-${uid ?? "user"}`);
  return join(dir, "register.lock");
}

/** `~/.nr/bin` as users write it, for messages. */
export function displayPath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME;
  return home && path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

/** The one-time peering kubeconfig's name in `run/`: it holds a token, and never outlives the call that uses it. */
export const PEERING_KUBECONFIG = "noderings-peering.kubeconfig";

/** The one-time consumer credential for the reverse peering, in `run/`: as the peering kubeconfig, it never outlives its call. */
export const CONSUMER_KUBECONFIG = "noderings-consumer.kubeconfig";

const HOME_WHAT = "nr's home (NR_HOME)";
const DIRS = {
  bin: { what: "nr's tool directory", mode: 0o755 },
  run: { what: "nr's run directory", mode: 0o700 },
} as const;

/**
 * Checks nr's home as nvkectl checks its own directories (ssh's rules for ~/.ssh): `~/.nr`,
 * `bin/` and `run/` must be the user's own and writable by no one else, and so must every
 * directory above them be (root's, or sticky as /tmp is). Another user who could write
 * there could plant a helm or liqoctl that nr would run as root, a state that decides
 * which phases count as done, or a link the one-time peering token would be written
 * through. Creates nothing (a dry run writes nothing); what is missing is fine. Throws
 * fs-safe's DIR_UNSAFE naming the directory at fault and the fix.
 */
export async function assertNrHome(paths: NrPaths): Promise<void> {
  await assertTrustedDir(paths.home, { own: true, what: HOME_WHAT });
  await assertTrustedDir(paths.bin, { own: true, what: DIRS.bin.what });
  await assertTrustedDir(paths.run, { own: true, what: DIRS.run.what });
}

/** Creates (or checks) `~/.nr` (0700) and `bin/` (0755: it goes on PATH) or `run/` (0700, narrowed when wider). */
export async function ensureNrDir(paths: NrPaths, dir: keyof typeof DIRS): Promise<string> {
  await ensurePrivateDir(paths.home, { what: HOME_WHAT });
  const { what, mode } = DIRS[dir];
  await ensurePrivateDir(paths[dir], { what, mode, narrow: dir === "run" });
  return paths[dir];
}

/** writeFileSafe's temporary files (`.<name>.<pid>.<12 hex>.tmp`). */
const WRITE_TEMP = /^\..+\.\d+\.[0-9a-f]{12}\.tmp$/;
/** An install's work directory (`.helm-install-XXXXXX`), a staged tool (`.helm.<pid>.new`), a download in progress (`.….partial`). */
const INSTALL_LEFTOVER = /^\.(?:[a-z0-9.-]+-install-[A-Za-z0-9]{6}|.+\.\d+\.new|.+\.partial)$/;

/**
 * Removes what a run that was killed (kill -9, a second Ctrl-C, a power cut) left in
 * `run/` and `bin/`: the one-time peering and consumer kubeconfigs, which hold a token, half-written
 * files, and partial downloads. Call it only while holding the run lock: no other run can
 * be using them then. Creates `run/` (0700) when it is missing. Returns what was removed,
 * relative to the home.
 */
export async function clearRunLeftovers(paths: NrPaths): Promise<string[]> {
  const removed: string[] = [];
  const sweep = async (dir: "run" | "bin", matches: (name: string) => boolean) => {
    let names: string[];
    try {
      names = await readdir(paths[dir]);
    } catch {
      return;
    }
    for (const name of names.filter(matches).sort()) {
      // rm removes a link itself, never what it points to.
      await rm(join(paths[dir], name), { recursive: true, force: true });
      removed.push(`${dir}/${name}`);
    }
  };
  await ensureNrDir(paths, "run");
  await sweep("run", (name) => name === PEERING_KUBECONFIG || name === CONSUMER_KUBECONFIG || WRITE_TEMP.test(name));
  await sweep("bin", (name) => INSTALL_LEFTOVER.test(name) || WRITE_TEMP.test(name));
  return removed;
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
 * can read is NR_CONFIG_INSECURE, as ssh refuses a readable private key; one that others
 * could have changed (its owner, its mode, a directory above it) is FILE_UNSAFE or DIR_UNSAFE.
 */
export async function loadNrConfig(paths: NrPaths): Promise<LoadedNrConfig> {
  // It names the API the token goes to and, for --offline, the pins every download is checked
  // against: one another user could have written is not used (FILE_UNSAFE, DIR_UNSAFE).
  await assertTrustedFile(paths.config, { what: "nr's config file" });
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
  tokenFrom: "--api-token-file" | "NR_API_TOKEN" | "config" | undefined;
}

/** The API URL (`--api-url`, else NR_API_URL, else the config file) and token (NR_API_TOKEN, else the config file). Never guessed. */
export function apiEndpoint(
  options: { apiUrl?: string | undefined; tokenFromFile?: string | undefined },
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
  if (options.tokenFromFile !== undefined)
    return { url, urlFrom, token: options.tokenFromFile, tokenFrom: "--api-token-file" };
  const envToken = env.NR_API_TOKEN?.trim();
  const token = envToken ? envToken : config.config.token;
  const tokenFrom = envToken ? "NR_API_TOKEN" : config.config.token !== undefined ? "config" : undefined;
  return { url, urlFrom, token, tokenFrom };
}

/**
 * The API token in the file `--api-token-file` names (a machine's secret mechanism put it there:
 * cloud-init, a vault agent): its first line, trimmed. Refused, as ~/.nr/config.yaml is, when
 * others may read it (mode not 0600) or could have written it (its owner, a directory above it).
 * The message names the file, never its content.
 */
export async function readApiTokenFile(path: string): Promise<string> {
  const refuse = (why: string, next: string) =>
    new UserError(
      errorCodes.API_TOKEN_FILE_INVALID,
      `--api-token-file ${path}: ${why}; it was not used and nothing was sent`,
      {
        next,
        facts: { file: path },
      },
    );
  try {
    await assertTrustedFile(path, { what: "the API token file" });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    throw refuse(error.message, error.next[0] ?? "make it a file only root or you can write");
  }
  let text: string;
  let mode: number;
  try {
    // A FIFO or a device would block or never end: only a regular file (a link to one) is read.
    if (!(await stat(path)).isFile()) {
      throw refuse("it is not a regular file", "give the path of a file that holds the token only");
    }
    [text, mode] = await Promise.all([
      readInputFile(path, { what: "the API token file", maxBytes: 64 * 1024 }).then((bytes) => bytes.toString("utf8")),
      stat(path).then((s) => s.mode & 0o777),
    ]);
  } catch (error) {
    if (error instanceof UserError) {
      if (error.code === errorCodes.API_TOKEN_FILE_INVALID.code) throw error;
      throw refuse(error.message, "give the path of a file that holds the token only");
    }
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw refuse(
      code === "ENOENT" ? "there is no such file" : `cannot read it (${code})`,
      "put the token there first (your cloud-init's write_files, or your secret agent), mode 0600",
    );
  }
  if ((mode & 0o077) !== 0) {
    throw refuse(
      `its mode is ${mode.toString(8).padStart(4, "0")}: others may read the token`,
      `chmod 600 ${path}, and consider the token exposed`,
    );
  }
  const token = text.split("\n", 1)[0]?.trim() ?? "";
  if (token === "") throw refuse("the file is empty", "write the API token on its first line");
  return token;
}
