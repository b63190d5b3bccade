import { createHash } from "node:crypto";
import { rm } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { isUserError } from "@nodekit/errors";
import { assertTrustedDir, type DirLookups, ensurePrivateDir, readPrivateFile, writeFileSafe } from "@nodekit/fs-safe";
import { isCacheFileJson } from "./cache.generated.ts";
import type { CacheEntry, CacheFile } from "./cache-schema.ts";
import type { ObjectRef } from "./constants.ts";
import { toInstant } from "./instant.ts";

export type { CacheEntry } from "./cache-schema.ts";

/** Token files hold bearer tokens: only their owner may read them. */
export const CACHE_FILE_MODE = 0o600;
export const CACHE_DIR_MODE = 0o700;

/** A token is renewed this long before it expires: 10% of its lifetime, at least a minute. */
export const MIN_REFRESH_MARGIN_MS = 60_000;
export const REFRESH_MARGIN_FRACTION = 0.1;

/** Which cache file: one per site and ServiceAccount. */
export interface CacheKey {
  readonly site: string;
  readonly serviceAccount: ObjectRef;
  /**
   * Which cluster credentials the entry came from ("file:/abs/path" or "server:… user:…").
   * An entry written for another kubeconfig is not used.
   */
  readonly source: string;
}

export type CacheLookup =
  | { readonly kind: "hit"; readonly entry: CacheEntry }
  | { readonly kind: "miss" }
  /** A file exists but cannot be used; `reason` never quotes its contents. */
  | { readonly kind: "ignored"; readonly reason: string }
  /**
   * The file or its directory could have been read or changed by another user (a link, a
   * loose mode, another owner): it is not used, and a file of ours with a loose mode was removed.
   */
  | { readonly kind: "unsafe"; readonly reason: string };

/**
 * nvkectl's token cache directory: `$XDG_CACHE_HOME/nvkectl/tokens`, else
 * `~/.cache/nvkectl/tokens`. A relative XDG_CACHE_HOME is ignored, as the XDG spec says.
 */
export function defaultTokenCacheDir(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".cache");
  return join(base, "nvkectl", "tokens");
}

/**
 * `<cacheDir>/<site>/<namespace>_<name>.json`. A site name that is not a plain file name
 * is hashed (`_<sha256>`); `_` cannot start a plain name, nor appear in a Kubernetes name.
 */
export function cacheFilePath(cacheDir: string, key: Pick<CacheKey, "site" | "serviceAccount">): string {
  return join(cacheDir, siteDirName(key.site), `${key.serviceAccount.namespace}_${key.serviceAccount.name}.json`);
}

function siteDirName(site: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(site)) return site;
  return `_${createHash("sha256").update(site).digest("hex").slice(0, 32)}`;
}

/** When a cached entry stops being used: expiry minus the refresh margin (auth off: expiry). */
export function refreshAt(entry: CacheEntry): Date {
  if (entry.auth === "off") return entry.expiresAt;
  const lifetime = entry.expiresAt.getTime() - entry.issuedAt.getTime();
  const margin = Math.max(MIN_REFRESH_MARGIN_MS, REFRESH_MARGIN_FRACTION * lifetime);
  return new Date(entry.expiresAt.getTime() - margin);
}

export function isFresh(entry: CacheEntry, now: Date): boolean {
  return now.getTime() < refreshAt(entry).getTime();
}

/**
 * Why the cache directories for this site cannot be trusted with a token (another user owns
 * one, or may write to it or to a directory above), or undefined when they can. Missing
 * directories are fine: they are made private when the first token is written. `lookups`
 * (fs-safe's dirLookups) shares the directories' answers with the checks of other sites.
 */
export async function cacheDirProblem(
  cacheDir: string,
  key: Pick<CacheKey, "site">,
  lookups?: DirLookups,
): Promise<string | undefined> {
  try {
    // Both checks at once (their lstat calls overlap); the cache directory's problem is reported first.
    const checks = [cacheDir, join(cacheDir, siteDirName(key.site))].map((dir) =>
      assertTrustedDir(dir, { own: true, what: "the token cache directory", lookups }).then(
        () => undefined,
        (error: unknown) => ({ error }),
      ),
    );
    for (const failed of await Promise.all(checks)) if (failed !== undefined) throw failed.error;
    return undefined;
  } catch (error) {
    if (isUserError(error)) return `${error.message}: ${error.why ?? ""}`.replace(/: $/, "");
    throw error;
  }
}

/**
 * The entry for this site, ServiceAccount and kubeconfig, fresh or not. Never throws. The
 * file is opened without following a link and used only when it is the user's own and
 * readable by no one else (as ssh treats a private key); a loose one is removed.
 */
export async function readCache(cacheDir: string, key: CacheKey): Promise<CacheLookup> {
  const path = cacheFilePath(cacheDir, key);
  const read = await readPrivateFile(path);
  if (read.kind === "missing") return { kind: "miss" };
  if (read.kind === "unreadable") return { kind: "ignored", reason: `${path} cannot be read (${read.code})` };
  if (read.kind === "unsafe") {
    if (read.fault === "not-file") return { kind: "ignored", reason: `${read.reason}; it is not used` };
    if (read.fault === "mode") {
      // Ours but readable by others: the token in it may have been read; a fresh one replaces it.
      await rm(path, { force: true }).catch(() => {});
      return { kind: "unsafe", reason: `${read.reason}; it was not used and has been removed` };
    }
    return { kind: "unsafe", reason: `${read.reason}; it is not used` };
  }
  return await parseCacheFile(read.data, path, key);
}

/** A token cache file's bytes as a lookup for `key`; `path` names it in reasons. Never throws, never quotes the bytes. */
export async function parseCacheFile(bytes: Uint8Array, path: string, key: CacheKey): Promise<CacheLookup> {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which holds a token: say only that it is not JSON.
    return { kind: "ignored", reason: `${path} is not valid JSON; it will be replaced` };
  }
  let file = acceptedCacheFile(json);
  if (file === undefined) {
    // zod loads only for a file the generated check does not accept: it names the faulty fields.
    const { cacheFileSchema } = await import("./cache-schema.ts");
    const parsed = cacheFileSchema.safeParse(json);
    if (!parsed.success) {
      const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".") || "(root)"))];
      return {
        kind: "ignored",
        reason: `${path} is not a token cache file (${fields.join(", ")}); it will be replaced`,
      };
    }
    file = parsed.data;
  }
  if (
    file.site !== key.site ||
    file.serviceAccount.namespace !== key.serviceAccount.namespace ||
    file.serviceAccount.name !== key.serviceAccount.name
  ) {
    return { kind: "ignored", reason: `${path} belongs to another site or ServiceAccount; it will be replaced` };
  }
  if (file.source !== key.source) {
    return { kind: "ignored", reason: `${path} was written for other cluster credentials; it will be replaced` };
  }
  return { kind: "hit", entry: file.state };
}

/**
 * What the schema (cache-schema.ts) returns for `value`, when the check generated from it
 * (cache.generated.ts) accepts it: the same file with its instants turned into Dates by the
 * schema's own transform. Undefined when the check declines: the schema then decides.
 */
export function acceptedCacheFile(value: unknown): CacheFile | undefined {
  if (!isCacheFileJson(value)) return undefined;
  const { state } = value;
  return {
    ...value,
    state:
      state.auth === "on"
        ? { ...state, issuedAt: toInstant(state.issuedAt), expiresAt: toInstant(state.expiresAt) }
        : { ...state, checkedAt: toInstant(state.checkedAt), expiresAt: toInstant(state.expiresAt) },
  };
}

/**
 * Writes the entry atomically (temporary file + rename), file 0600 in 0700 directories that
 * must be the user's own with nothing above writable by others; never through a link.
 * Throws @nodekit/fs-safe's DIR_UNSAFE, FILE_IS_SYMLINK, FILE_WRITE_FAILED.
 */
export async function writeCache(cacheDir: string, key: CacheKey, entry: CacheEntry): Promise<string> {
  const path = cacheFilePath(cacheDir, key);
  const siteDir = join(cacheDir, siteDirName(key.site));
  const what = "the token cache directory";
  await ensurePrivateDir(cacheDir, { mode: CACHE_DIR_MODE, narrow: true, what });
  await ensurePrivateDir(siteDir, { mode: CACHE_DIR_MODE, narrow: true, what });
  const state =
    entry.auth === "on"
      ? { ...entry, issuedAt: entry.issuedAt.toISOString(), expiresAt: entry.expiresAt.toISOString() }
      : { ...entry, checkedAt: entry.checkedAt.toISOString(), expiresAt: entry.expiresAt.toISOString() };
  const file = {
    version: 1,
    site: key.site,
    source: key.source,
    serviceAccount: { namespace: key.serviceAccount.namespace, name: key.serviceAccount.name },
    state,
  };
  await writeFileSafe(path, `${JSON.stringify(file, null, 2)}\n`, {
    mode: CACHE_FILE_MODE,
    what: "the token cache file",
  });
  return path;
}

/** Drops the entry; a missing file is fine. */
export async function removeCache(cacheDir: string, key: Pick<CacheKey, "site" | "serviceAccount">): Promise<void> {
  await rm(cacheFilePath(cacheDir, key), { force: true });
}
