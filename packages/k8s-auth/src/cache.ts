import { rm as rmCallback } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { promisify } from "node:util";
import { isUserError } from "@nodekit/errors";
import { assertTrustedDir, ensurePrivateDir, readPrivateFile, writeFileSafe } from "@nodekit/fs-safe";
import type { ObjectRef } from "./constants.ts";

// Not node:fs/promises: it loads eight more of Node's modules on every cached read.
const rm = promisify(rmCallback);

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

export type CacheEntry =
  | {
      readonly auth: "on";
      readonly audience: string;
      /** The auth ConfigMap the audience came from. */
      readonly configMap: ObjectRef;
      readonly token: string;
      readonly issuedAt: Date;
      readonly expiresAt: Date;
    }
  | {
      /** No auth ConfigMap existed when this was written; believed until expiresAt. */
      readonly auth: "off";
      readonly checkedAt: Date;
      readonly expiresAt: Date;
    };

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

/** The cache file as read: the entry's dates parsed. */
export interface CacheFile {
  version: 1;
  site: string;
  source: string;
  serviceAccount: ObjectRef;
  state: CacheEntry;
}

/** The number written by the two ASCII digits at `at`, or -1 (NaN past the end fails both comparisons). */
function twoDigits(value: string, at: number): number {
  const tens = value.charCodeAt(at) - 48;
  const ones = value.charCodeAt(at + 1) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1;
}

const DAYS_IN_MONTH = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * zod's `z.iso.datetime({ offset: true })`, which the schema (cache-schema.ts) uses, by
 * character code: `YYYY-MM-DDTHH:MM:SS[.fraction]` then `Z` or `±HH:MM`, a real calendar day.
 * zod's pattern costs ≈ 0.7 ms to compile on first use; cache-file.test.ts holds the two equal.
 */
export function isInstantText(value: string): boolean {
  const century = twoDigits(value, 0);
  const yy = twoDigits(value, 2);
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  if (century < 0 || yy < 0 || month < 1 || month > 12 || day < 1 || day > (DAYS_IN_MONTH[month] as number)) {
    return false;
  }
  if (month === 2 && day === 29) {
    const year = century * 100 + yy;
    if (year % 4 !== 0 || (year % 100 === 0 && year % 400 !== 0)) return false;
  }
  if (value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45 || value.charCodeAt(10) !== 84 /* T */) return false;
  const hour = twoDigits(value, 11);
  const minute = twoDigits(value, 14);
  const second = twoDigits(value, 17);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  if (value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58 /* : */) return false;
  let at = 19;
  if (value.charCodeAt(at) === 46 /* . */) {
    const digits = ++at;
    for (let code = value.charCodeAt(at); code >= 48 && code <= 57; code = value.charCodeAt(at)) at++;
    if (at === digits) return false;
  }
  const zone = value.charCodeAt(at);
  if (zone === 90 /* Z */) return at + 1 === value.length;
  if (zone !== 43 && zone !== 45 /* + - */) return false;
  const hours = twoDigits(value, at + 1);
  const minutes = twoDigits(value, at + 4);
  return (
    hours >= 0 &&
    hours <= 23 &&
    value.charCodeAt(at + 3) === 58 &&
    minutes >= 0 &&
    minutes <= 59 &&
    at + 6 === value.length
  );
}

type Fields = Record<string, unknown>;
const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.length > 0;
const instant = (value: unknown): Date | undefined =>
  typeof value === "string" && isInstantText(value) ? new Date(value) : undefined;
const ref = (value: unknown): ObjectRef | undefined =>
  isObject(value) && nonEmpty(value.namespace) && nonEmpty(value.name)
    ? { namespace: value.namespace, name: value.name }
    : undefined;

/**
 * The cache file without zod: what the schema in cache-schema.ts returns for `json`, or
 * undefined for anything the schema might not accept (that then goes to zod, which names
 * the fields). A cache hit, the common case, so never loads zod; cache.test.ts holds the two equal.
 */
export function readCacheFile(json: unknown): CacheFile | undefined {
  if (!isObject(json) || json.version !== 1 || typeof json.site !== "string" || typeof json.source !== "string") {
    return undefined;
  }
  const serviceAccount = ref(json.serviceAccount);
  const state = json.state;
  if (serviceAccount === undefined || !isObject(state)) return undefined;
  const expiresAt = instant(state.expiresAt);
  if (expiresAt === undefined) return undefined;
  let entry: CacheEntry;
  if (state.auth === "on") {
    const configMap = ref(state.configMap);
    const issuedAt = instant(state.issuedAt);
    if (!nonEmpty(state.audience) || configMap === undefined || !nonEmpty(state.token) || issuedAt === undefined) {
      return undefined;
    }
    entry = { auth: "on", audience: state.audience, configMap, token: state.token, issuedAt, expiresAt };
  } else if (state.auth === "off") {
    const checkedAt = instant(state.checkedAt);
    if (checkedAt === undefined) return undefined;
    entry = { auth: "off", checkedAt, expiresAt };
  } else {
    return undefined;
  }
  return { version: 1, site: json.site, source: json.source, serviceAccount, state: entry };
}

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
  // node:crypto is loaded only for such names: most runs do not need it (≈2 ms at start-up).
  const { createHash } = process.getBuiltinModule("node:crypto");
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
 * directories are fine: they are made private when the first token is written.
 */
export async function cacheDirProblem(cacheDir: string, key: Pick<CacheKey, "site">): Promise<string | undefined> {
  try {
    // Both checks at once (their lstat calls overlap); the cache directory's problem is reported first.
    const checks = [cacheDir, join(cacheDir, siteDirName(key.site))].map((dir) =>
      assertTrustedDir(dir, { own: true, what: "the token cache directory" }).then(
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
  return parseCacheFile(read.data, path, key);
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
  let file = readCacheFile(json);
  if (file === undefined) {
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
