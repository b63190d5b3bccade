import { delimiter, resolve } from "node:path";
import { isUserError } from "@nodekit/errors";
import type { DirLookups } from "@nodekit/fs-safe";
import { connect, type KubeconfigSource } from "@nodekit/kube";
import {
  type CacheEntry,
  type CacheKey,
  type CacheLookup,
  cacheDirProblem,
  isFresh,
  readCache,
  refreshAt,
  removeCache,
  writeCache,
} from "./cache.ts";
import {
  CLIENT_SERVICE_ACCOUNT,
  DEFAULT_AUTH_OFF_TTL_SECONDS,
  DEFAULT_EXPIRATION_SECONDS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  formatRef,
  type ObjectRef,
} from "./constants.ts";
import { discoverWith } from "./discover.ts";
import { type AuthLog, emit } from "./events.ts";
import { checkExpiration, mintWith } from "./mint.ts";

export interface TokenProviderOptions {
  /** The site's name: what the cache is keyed by (with the ServiceAccount). */
  site: string;
  /** The site cluster: a kubeconfig path, or a loaded KubeConfig. */
  kubeconfig: KubeconfigSource;
  /** Where tokens are cached (nvkectl: {@link defaultTokenCacheDir}). Created 0700. */
  cacheDir: string;
  /** Default: the system clock. */
  now?: () => Date;
  /** Debug events (never a token). */
  log?: AuthLog;
  /** Called with every token handed out, cached or new: register it with your redactor. */
  onToken?: (token: string) => void;
  /** Default nke-clients/nke-client. */
  serviceAccount?: ObjectRef;
  /** Requested token lifetime; default 3600, at least 600. */
  expirationSeconds?: number;
  /** How long "auth off" is cached; default 300 s, 0 to ask the cluster every time. */
  authOffTtlSeconds?: number;
  /** Per request to the Kubernetes API; default 30 s. */
  requestTimeoutMs?: number;
  /**
   * The cache directories' lstat and realpath answers, shared by the providers of several
   * sites in one command (fs-safe's `dirLookups()`): the cache directory and each directory
   * above it are then checked once, not once per site.
   */
  dirLookups?: DirLookups;
}

export interface TokenProvider {
  /**
   * A bearer token for the site's controller API, or `undefined` when auth is off (no auth
   * ConfigMap exists). From the cache while it is fresh — no Kubernetes request and
   * @kubernetes/client-node is not even loaded — otherwise discovered and minted, then cached.
   */
  token(): Promise<string | undefined>;
  /** Forgets the cached token (or "auth off"): call it when the controller answers 401, then retry once. */
  invalidate(): Promise<void>;
}

/** Tokens for one site, cached on disk (see the README for the layout). */
export function createTokenProvider(options: TokenProviderOptions): TokenProvider {
  checkExpiration(options.expirationSeconds);
  const now = options.now ?? (() => new Date());
  const { cacheDir, log } = options;
  const serviceAccount = options.serviceAccount ?? CLIENT_SERVICE_ACCOUNT;
  const expirationSeconds = options.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  const authOffTtlMs = (options.authOffTtlSeconds ?? DEFAULT_AUTH_OFF_TTL_SECONDS) * 1000;
  const key: CacheKey = { site: options.site, serviceAccount, source: sourceOf(options.kubeconfig) };
  const hand = (token: string): string => {
    options.onToken?.(token);
    return token;
  };

  // Checked once per provider: a cache another user could reach is neither read nor written.
  let dirProblem: Promise<string | undefined> | undefined;
  const fetchToken = async (): Promise<string | undefined> => {
    dirProblem ??= cacheDirProblem(cacheDir, key, options.dirLookups).then((problem) => {
      if (problem !== undefined) {
        emit(log, "cache-unsafe", `token cache not used: ${problem}`, { site: key.site });
      }
      return problem;
    });
    const unsafeDir = await dirProblem;
    const cached: CacheLookup = unsafeDir === undefined ? await readCache(cacheDir, key) : { kind: "miss" };
    const checkedAt = now();
    if (cached.kind === "hit") {
      const usable = isFresh(cached.entry, checkedAt);
      if (usable && cached.entry.auth === "off") {
        emit(
          log,
          "cache-auth-off",
          `auth off (cached; asking the cluster again in ${until(cached.entry.expiresAt, checkedAt)})`,
          {
            site: key.site,
          },
        );
        return undefined;
      }
      if (usable && cached.entry.auth === "on") {
        emit(log, "cache-hit", `using cached token, expires in ${until(cached.entry.expiresAt, checkedAt)}`, {
          site: key.site,
          audience: cached.entry.audience,
          expiresAt: cached.entry.expiresAt.toISOString(),
        });
        return hand(cached.entry.token);
      }
      emit(
        log,
        "cache-stale",
        cached.entry.auth === "off"
          ? 'cached "auth off" is due for a re-check; asking the cluster'
          : `cached token expires in ${until(cached.entry.expiresAt, checkedAt)} (renewed from ${refreshAt(cached.entry).toISOString()}); minting a new one`,
        { site: key.site },
      );
    } else if (cached.kind === "ignored") {
      emit(log, "cache-ignored", `token cache ignored: ${cached.reason}`, { site: key.site });
    } else if (cached.kind === "unsafe") {
      emit(log, "cache-unsafe", `token cache not used: ${cached.reason}`, { site: key.site });
    } else {
      emit(log, "cache-miss", `no cached token for site ${key.site}`, { site: key.site });
    }

    const client = await connect(options.kubeconfig, {
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    });
    const discovery = await discoverWith(client, log);
    if (discovery.auth === "off") {
      if (authOffTtlMs > 0) {
        await save({ auth: "off", checkedAt, expiresAt: new Date(checkedAt.getTime() + authOffTtlMs) });
      }
      return undefined;
    }
    const issuedAt = now();
    const minted = await mintWith(client, { audience: discovery.audience, serviceAccount, expirationSeconds });
    const token = hand(minted.token);
    // The server's clock may differ from ours: trust whichever expiry comes first.
    const expiresAt = new Date(Math.min(minted.expiresAt.getTime(), issuedAt.getTime() + expirationSeconds * 1000));
    emit(
      log,
      "token-minted",
      `minted a token for ServiceAccount ${formatRef(serviceAccount)}, audience ${JSON.stringify(discovery.audience)}, expires in ${until(expiresAt, issuedAt)}`,
      { site: key.site, audience: discovery.audience, expiresAt: expiresAt.toISOString() },
    );
    await save({
      auth: "on",
      audience: discovery.audience,
      configMap: discovery.configMap,
      token,
      issuedAt,
      expiresAt,
    });
    return token;
  };

  // A cache that cannot be written costs a mint next time, not this command.
  const save = async (entry: CacheEntry): Promise<void> => {
    if ((await dirProblem) !== undefined) return;
    try {
      await writeCache(cacheDir, key, entry);
    } catch (error) {
      if (isUserError(error) && error.code !== "FILE_WRITE_FAILED") {
        emit(log, "cache-unsafe", `token cache not written: ${error.message}${error.why ? `: ${error.why}` : ""}`, {
          site: key.site,
        });
      } else {
        emit(
          log,
          "cache-ignored",
          `token cache not written: ${describeFsError(isUserError(error) ? error.cause : error)}`,
          {
            site: key.site,
          },
        );
      }
    }
  };

  let pending: Promise<string | undefined> | undefined;
  return {
    token() {
      pending ??= fetchToken().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    async invalidate() {
      await removeCache(cacheDir, key);
      emit(log, "cache-invalidated", `dropped the cached token for site ${key.site}`, { site: key.site });
    },
  };
}

function sourceOf(kubeconfig: KubeconfigSource): string {
  if (typeof kubeconfig === "string") return `file:${resolve(kubeconfig)}`;
  if (Array.isArray(kubeconfig)) return `files:${kubeconfig.map((file: string) => resolve(file)).join(delimiter)}`;
  kubeconfig = kubeconfig as Exclude<KubeconfigSource, string | readonly string[]>;
  return `server:${kubeconfig.getCurrentCluster()?.server ?? ""} user:${kubeconfig.getCurrentUser()?.name ?? ""}`;
}

/** "52m", "45s", "3h" */
function until(when: Date, from: Date): string {
  const seconds = Math.round((when.getTime() - from.getTime()) / 1000);
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 120 * 60) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

function describeFsError(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const { code, path } = error as { code?: unknown; path?: unknown };
    if (typeof code === "string") return typeof path === "string" ? `${code} on ${path}` : code;
  }
  return "unknown error";
}
