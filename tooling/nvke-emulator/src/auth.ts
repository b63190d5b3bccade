import { createHash } from "node:crypto";
import { bearerToken } from "@nodekit/emulator-kit";
import { ApiError } from "./api-error.ts";
import type { SiteCluster } from "./site.ts";

/** Where the controller looks for its auth ConfigMap, in order (NV-9, the same search as the CLI's). */
export const AUTH_CONFIGMAP_CANDIDATES = [
  { namespace: "nke-controller", name: "nvke-auth-config" },
  { namespace: "nke-controller", name: "nke-auth-config" },
  { namespace: "cloud-workflow-engine", name: "nvke-auth-config" },
  { namespace: "cloud-workflow-engine", name: "nke-auth-config" },
] as const;

/** The ConfigMap data key holding the audience. */
export const AUDIENCE_KEY = "audience";

export type AuthConfig =
  | { mode: "off" }
  | { mode: "on"; audience: string; source: string }
  /** Candidates exist but none could be used: the controller refuses every request rather than run open. */
  | { mode: "broken"; message: string };

export interface AuthOptions {
  /** How long the ConfigMap search result is served before it is re-read in the background (default 1000 ms; 0 reads it on every request). */
  configTtlMs?: number;
  /**
   * The oldest view a request is judged on (default 2000 ms, and never less than configTtlMs):
   * a request that finds the known view older than this waits for a fresh read.
   */
  maxStaleMs?: number;
  /** How long a token that passed its TokenReview is trusted without asking again (default 10 s). */
  reviewTtlMs?: number;
  now?: () => number;
}

/**
 * The controller's authentication: the auth ConfigMap decides whether it is on and for
 * which audience; every bearer token is checked with a TokenReview against the site's
 * API server for that audience. Positive reviews are cached briefly; failures never are.
 */
export class Authenticator {
  private config: { value: AuthConfig; at: number } | undefined;
  private loading: Promise<AuthConfig> | undefined;
  /** Tokens that passed their TokenReview: key → who they are and until when that is trusted. */
  private readonly reviews = new Map<string, { username: string | undefined; until: number }>();
  private readonly configTtlMs: number;
  private readonly maxStaleMs: number;
  private readonly reviewTtlMs: number;
  private readonly now: () => number;
  private readonly site: SiteCluster;

  constructor(site: SiteCluster, options: AuthOptions = {}) {
    this.site = site;
    this.configTtlMs = options.configTtlMs ?? 1000;
    this.maxStaleMs = Math.max(options.maxStaleMs ?? 2000, this.configTtlMs);
    this.reviewTtlMs = options.reviewTtlMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The auth configuration, never judged on a view older than `maxStaleMs`: like a
   * controller's informer cache, a view younger than the TTL is served as it is, and one
   * past the TTL is still served while a re-read runs behind the request, so a busy
   * controller never waits on the site's API server for it. A view older than
   * `maxStaleMs` (the first request after an idle spell) waits for the re-read: "auth off"
   * and "auth on" are never decided on what the ConfigMaps said minutes ago.
   */
  async currentConfig(): Promise<AuthConfig> {
    const known = this.config;
    const age = known === undefined ? Number.POSITIVE_INFINITY : this.now() - known.at;
    if (known !== undefined && age < this.configTtlMs) return known.value;
    const reading = this.reread();
    if (known === undefined || this.configTtlMs === 0 || age >= this.maxStaleMs) return reading;
    // A failed re-read keeps the known configuration, as an informer keeps its cache.
    reading.catch(() => {});
    return known.value;
  }

  private reread(): Promise<AuthConfig> {
    // The view is as old as the moment its read began: a slow read does not make it look newer.
    const startedAt = this.now();
    this.loading ??= this.search()
      .then((value) => {
        this.config = { value, at: startedAt };
        return value;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  private async search(): Promise<AuthConfig> {
    const denials: string[] = [];
    for (const candidate of AUTH_CONFIGMAP_CANDIDATES) {
      const read = await this.site.readConfigMap(candidate.namespace, candidate.name);
      if (!read.found) {
        if (read.reason === "Forbidden") denials.push(read.message);
        continue;
      }
      const audience = read.data[AUDIENCE_KEY]?.trim();
      const source = `${candidate.namespace}/${candidate.name}`;
      if (!audience) {
        return {
          mode: "broken",
          message: `auth ConfigMap ${source} has no "${AUDIENCE_KEY}" key; the controller cannot check tokens`,
        };
      }
      return { mode: "on", audience, source };
    }
    if (denials.length > 0) {
      return { mode: "broken", message: `the controller cannot read its auth ConfigMap: ${denials.join("; ")}` };
    }
    return { mode: "off" };
  }

  /** Throws the 401 (or 503) the controller answers with; returns the user name when auth is on. */
  async authenticate(authorization: string | undefined): Promise<string | undefined> {
    let config: AuthConfig;
    try {
      config = await this.currentConfig();
    } catch (error) {
      throw new ApiError(
        503,
        `the controller cannot reach the site's Kubernetes API to read its auth configuration: ${(error as Error).message}`,
      );
    }
    if (config.mode === "off") return undefined;
    if (config.mode === "broken") throw new ApiError(503, config.message);

    const token = bearerToken(authorization);
    if (token === undefined) {
      throw new ApiError(
        401,
        authorization === undefined
          ? `authentication required: send a bearer token for audience "${config.audience}"`
          : `the Authorization header is not "Bearer <token>"`,
      );
    }
    const key = `${config.audience}\u0000${createHash("sha256").update(token).digest("hex")}`;
    const cached = this.reviews.get(key);
    if (cached !== undefined && cached.until > this.now()) return cached.username;

    let review: Awaited<ReturnType<SiteCluster["reviewToken"]>>;
    try {
      review = await this.site.reviewToken(token, config.audience);
    } catch (error) {
      throw new ApiError(
        503,
        `the controller cannot validate bearer tokens: the TokenReview failed: ${(error as Error).message}`,
      );
    }
    if (!review.authenticated || (review.audiences !== undefined && !review.audiences.includes(config.audience))) {
      throw new ApiError(
        401,
        `bearer token rejected for audience "${config.audience}"${review.error ? `: ${review.error}` : ""}`,
      );
    }
    if (this.reviews.size > 10_000) this.reviews.clear();
    this.reviews.set(key, { username: review.username, until: this.now() + this.reviewTtlMs });
    return review.username;
  }
}
