import { createHash, type Hash } from "node:crypto";
import { Writable } from "node:stream";
import { UserError } from "@nodekit/errors";
import {
  classifyTransportError,
  createTransport,
  formatBytes,
  type HttpResponse,
  type Method,
  request,
  type Transport,
  TransportError,
} from "@nodekit/http";
import { type Challenge, parseChallenges } from "./challenge.ts";
import { anonymous, type Credential, type CredentialStore } from "./credentials.ts";
import { digestOf, isDigest } from "./digest.ts";
import { errorCodes } from "./errors.ts";
import { checkManifest } from "./manifest.ts";
import { MANIFEST_MEDIA_TYPES, MediaType } from "./media-types.ts";
import { formatReference, manifestIdentifier, parseReference, type Reference } from "./reference.ts";

/** A content descriptor, as the image spec defines it. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly artifactType?: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A manifest as read from the registry: its bytes (which hash to `descriptor.digest`) and their JSON. */
export interface FetchedManifest {
  readonly descriptor: Descriptor;
  readonly bytes: Uint8Array;
  readonly manifest: Readonly<Record<string, unknown>>;
}

export interface PushedManifest {
  readonly descriptor: Descriptor;
  /** The `OCI-Subject` the registry answered with: it indexed the manifest's subject for the referrers API. */
  readonly subject?: string;
}

export interface Referrers {
  readonly descriptors: Descriptor[];
  /** How they were found: the referrers API, or the `sha256-<hex>` tag holding an index. */
  readonly via: "api" | "tag";
}

export interface PingResult {
  /** 200 when the registry answers anonymously, 401 when it asks for credentials. */
  readonly status: number;
  readonly challenge?: Challenge;
  /** The `Docker-Distribution-API-Version` header, when sent. */
  readonly apiVersion?: string;
}

/** Holds secrets so they can be removed from logs (a `Redactor` from @nodekit/process fits). */
export interface SecretSink {
  add(secret: string | undefined): void;
}

export interface OciClientOptions {
  /**
   * The connections every request goes through (`createTransport` of `@nodekit/http`);
   * default: one that keeps its connections and trusts `ca` when given.
   */
  transport?: Transport;
  /** The CA certificates (PEM) to trust for TLS, for a registry with a private CA. */
  ca?: string | readonly string[];
  /** Talk plain HTTP to these registries (loopback test registries); default: HTTPS everywhere. */
  plainHttp?: boolean | ((registry: string) => boolean);
  /** Where credentials come from; default: none (anonymous). */
  credentials?: CredentialStore;
  /** Every password and token the client uses is handed to this, before it is sent anywhere. */
  secrets?: SecretSink;
  /** Deadline for each request, headers and body together; default 30 s. */
  timeoutMs?: number;
  /** Largest manifest (or referrers index, or token response) read; default 4 MiB, as the distribution registry's. */
  maxManifestBytes?: number;
  /** Largest blob read into memory by getBlob; default 512 MiB. */
  maxBlobBytes?: number;
  /** Milliseconds since the epoch, for token expiry and Retry-After dates; default Date.now. */
  now?: () => number;
  userAgent?: string;
  /**
   * Reads (GET, HEAD) answered 429, 502, 503 or 504, or whose connection was lost, are sent
   * again after the wait Retry-After asks for (else a backoff from 500 ms), at most
   * `attempts` times while the wait is at most `maxWaitMs` (default 3, 30 s). Writes never.
   */
  retry?: { attempts?: number; maxWaitMs?: number };
  /** How a wait between attempts is spent (default: a timer). */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /**
   * Hosts (`auth.docker.io`, or `host:port`) a registry's Bearer challenge may send the token
   * request to although they are not the registry's own host. A realm on another host or
   * scheme is refused otherwise (OCI_TOKEN_REALM_REFUSED): it would receive the registry's
   * credentials. One allowed here is used with a warning.
   */
  allowTokenRealms?: readonly string[];
  /** Warnings (a token realm used on another host); default: none shown. */
  onWarning?: (message: string) => void;
}

type Actions = "pull" | "pull,push";

interface Scope {
  repository: string;
  actions: Actions;
}

interface Exchange {
  registry: string;
  method: Method;
  /** A path under the registry (`/v2/…`) or an absolute URL (an upload Location). */
  target: string;
  headers?: Record<string, string>;
  body?: Uint8Array;
  scope?: Scope;
  /** What the request is about, for messages: `manifest registry/repo:tag`. */
  what: string;
  /** The most read of a successful answer's body (default 64 KiB, cut there: a body only quoted). */
  maxBytes?: number;
  /** Where a successful answer's body goes as it arrives, instead of into memory (one fresh sink per attempt). */
  sink?: () => Writable;
  /** The deadline for the whole answer, when it is not the client's (a stream of hundreds of megabytes). */
  timeoutMs?: number;
  /** Fails an answer that sends nothing for this long. */
  stallTimeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_MANIFEST = 4 * 1024 * 1024;
const DEFAULT_MAX_BLOB = 512 * 1024 * 1024;

const referenceOf = (reference: Reference | string): Reference =>
  typeof reference === "string" ? parseReference(reference) : reference;

/** The request that reads blob `digest` of `ref`'s repository, with pull access. */
const blobRead = (ref: Reference, digest: string, method: "HEAD" | "GET"): Exchange => ({
  registry: ref.registry,
  method,
  target: `/v2/${ref.repository}/blobs/${digest}`,
  scope: { repository: ref.repository, actions: "pull" },
  what: `blob ${ref.registry}/${ref.repository}@${digest}`,
});

/** A registry's `{"errors":[{code,message}]}` body as one line, or the start of whatever else it sent. */
function registrySaid(text: string): string {
  try {
    const parsed = JSON.parse(text) as { errors?: Array<{ code?: unknown; message?: unknown }> };
    if (Array.isArray(parsed.errors) && parsed.errors.length > 0) {
      return parsed.errors
        .slice(0, 5)
        .map((e) => [e?.code, e?.message].filter((part) => typeof part === "string").join(": "))
        .join("; ")
        .slice(0, 1000);
    }
  } catch {
    // not JSON
  }
  const trimmed = text.trim().replace(/\s+/g, " ");
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed;
}

/**
 * A small client for the OCI distribution API: ping and its challenge, Basic and Bearer
 * token auth with scopes, manifests and blobs by tag or digest, monolithic blob upload,
 * and referrers (API, or the `sha256-<hex>` tag schema where the registry has none).
 * Every read is checked against the digest it was asked for.
 */
export class OciClient {
  readonly #transport: Transport;
  readonly #plainHttp: (registry: string) => boolean;
  readonly #credentials: CredentialStore;
  readonly #secrets: SecretSink | undefined;
  readonly #timeoutMs: number;
  readonly #maxManifest: number;
  readonly #maxBlob: number;
  readonly #now: () => number;
  readonly #userAgent: string;
  readonly #retry: OciClientOptions["retry"];
  readonly #sleep: OciClientOptions["sleep"];
  readonly #allowTokenRealms: readonly string[];
  readonly #onWarning: (message: string) => void;
  readonly #warned = new Set<string>();
  /** The challenge each registry answered with, so later requests authenticate up front. */
  readonly #challenges = new Map<string, Challenge>();
  readonly #tokens = new Map<string, { token: string; expiresAt: number }>();
  readonly #referrersApi = new Map<string, boolean>();

  constructor(options: OciClientOptions = {}) {
    this.#transport = options.transport ?? createTransport({ ca: options.ca, keepAlive: true });
    const plain = options.plainHttp ?? false;
    this.#plainHttp = typeof plain === "function" ? plain : () => plain;
    this.#credentials = options.credentials ?? anonymous;
    this.#secrets = options.secrets;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxManifest = options.maxManifestBytes ?? DEFAULT_MAX_MANIFEST;
    this.#maxBlob = options.maxBlobBytes ?? DEFAULT_MAX_BLOB;
    this.#now = options.now ?? Date.now;
    this.#userAgent = options.userAgent ?? "nodekit-oci";
    this.#retry = options.retry;
    this.#sleep = options.sleep;
    this.#allowTokenRealms = options.allowTokenRealms ?? [];
    this.#onWarning = options.onWarning ?? (() => {});
  }

  /** `GET /v2/`: whether the registry answers, and how it asks for credentials. Never sends any. */
  async ping(registry: string): Promise<PingResult> {
    const response = await this.#send(new URL("/v2/", this.#base(registry)), { method: "GET" }, `registry ${registry}`);
    const apiVersion = response.headers["docker-distribution-api-version"];
    const challenge = parseChallenges(response.headers["www-authenticate"] ?? "")[0];
    if (response.status !== 200 && response.status !== 401) {
      throw registryError(response.status, response.text(), `registry ${registry}`);
    }
    if (challenge !== undefined) this.#challenges.set(registry, challenge);
    return {
      status: response.status,
      ...(challenge === undefined ? {} : { challenge }),
      ...(apiVersion === undefined ? {} : { apiVersion }),
    };
  }

  /** The descriptor a tag or digest points at (`HEAD` of the manifest), without reading it. */
  async resolve(reference: Reference | string): Promise<Descriptor> {
    const ref = referenceOf(reference);
    const { response, what } = await this.#manifest(ref, "HEAD");
    const digest = response.headers["docker-content-digest"];
    const mediaType = response.headers["content-type"]?.split(";")[0]?.trim();
    const size = Number(response.headers["content-length"]);
    if (digest === undefined || !isDigest(digest) || mediaType === undefined || !Number.isFinite(size)) {
      // No usable digest header: read the manifest and hash it.
      return (await this.getManifest(ref)).descriptor;
    }
    if (ref.digest !== undefined && digest !== ref.digest) throw mismatch(what, ref.digest, digest);
    return { mediaType, digest, size };
  }

  /**
   * Ask one pull token for many repositories of a registry at once (a token endpoint takes
   * several `scope`s), so that checking hundreds of repositories costs a few token requests,
   * not one each. Only where the registry's Bearer challenge is known (after a first request);
   * elsewhere it does nothing. A token endpoint that grants fewer scopes than asked costs
   * nothing either: the registry answers 401 for the others, and those requests fetch their own.
   */
  async authorizePull(
    registry: string,
    repositories: readonly string[],
    options: { batch?: number } = {},
  ): Promise<void> {
    const challenge = this.#challenges.get(registry);
    const realm = challenge?.params.realm;
    if (challenge?.scheme !== "bearer" || realm === undefined) return;
    const service = challenge.params.service;
    const credential = await this.#credentials.get(registry);
    if (credential !== undefined) this.#secrets?.add(credential.password);
    const keyOf = (repository: string) => `${realm}|${service ?? ""}|repository:${repository}:pull`;
    const wanted = [...new Set(repositories)].filter((repository) => {
      const cached = this.#tokens.get(keyOf(repository));
      return cached === undefined || cached.expiresAt <= this.#now();
    });
    // 50 scopes keep the token URL under 4 KB with long repository names.
    const batch = options.batch ?? 50;
    const chunks: string[][] = [];
    for (let i = 0; i < wanted.length; i += batch) chunks.push(wanted.slice(i, i + batch));
    await Promise.all(
      chunks.map(async (chunk) => {
        const scopes = chunk.map((repository) => `repository:${repository}:pull`).join(" ");
        const token = await this.#fetchToken(registry, realm, service, scopes, credential);
        for (const repository of chunk) this.#tokens.set(keyOf(repository), token);
      }),
    );
  }

  /** Whether the manifest exists, by tag or digest: its descriptor, or undefined on 404. */
  async manifestExists(reference: Reference | string): Promise<Descriptor | undefined> {
    try {
      return await this.resolve(reference);
    } catch (error) {
      if (error instanceof UserError && error.code === errorCodes.OCI_NOT_FOUND.code) return undefined;
      throw error;
    }
  }

  /** Read a manifest (image manifest, index or artifact manifest) and check it hashes to its digest. */
  async getManifest(reference: Reference | string): Promise<FetchedManifest> {
    const ref = referenceOf(reference);
    const { response, what } = await this.#manifest(ref, "GET");
    const bytes = response.body;
    const claimed = response.headers["docker-content-digest"];
    const expected = ref.digest ?? (claimed !== undefined && isDigest(claimed) ? claimed : undefined);
    const digest = digestOf(bytes, expected ?? "sha256:");
    if (expected !== undefined && digest !== expected) throw mismatch(what, expected, digest);
    const served = response.headers["content-type"]?.split(";")[0]?.trim();
    const manifest = checkManifest(this.#json(bytes, what), served, what);
    const mediaType =
      (typeof manifest.mediaType === "string" ? manifest.mediaType : undefined) ?? served ?? MediaType.ImageManifest;
    const artifactType = typeof manifest.artifactType === "string" ? manifest.artifactType : undefined;
    return {
      descriptor: { mediaType, digest, size: bytes.length, ...(artifactType === undefined ? {} : { artifactType }) },
      bytes,
      manifest,
    };
  }

  /**
   * Push a manifest under a tag, or by its own digest when `tag` is left out. The bytes
   * are sent as given, so the digest is exactly theirs.
   */
  async putManifest(
    repository: Reference | string,
    manifest: Uint8Array | Readonly<Record<string, unknown>>,
    options: { mediaType?: string; tag?: string } = {},
  ): Promise<PushedManifest> {
    const ref = referenceOf(repository);
    const bytes = manifest instanceof Uint8Array ? manifest : new TextEncoder().encode(JSON.stringify(manifest));
    const parsed = manifest instanceof Uint8Array ? this.#json(bytes, "manifest") : manifest;
    const mediaType =
      options.mediaType ?? (typeof parsed.mediaType === "string" ? parsed.mediaType : MediaType.ImageManifest);
    const digest = digestOf(bytes);
    const id = options.tag ?? digest;
    const what = `manifest ${ref.registry}/${ref.repository}${options.tag === undefined ? `@${digest}` : `:${options.tag}`}`;
    const response = await this.#exchange({
      registry: ref.registry,
      method: "PUT",
      target: `/v2/${ref.repository}/manifests/${id}`,
      headers: { "content-type": mediaType },
      body: bytes,
      scope: { repository: ref.repository, actions: "pull,push" },
      what,
    });
    if (response.status !== 201 && response.status !== 200) throw registryError(response.status, response.text(), what);
    const stored = response.headers["docker-content-digest"];
    if (stored !== undefined && stored !== digest) throw mismatch(what, digest, stored);
    const subject = response.headers["oci-subject"];
    const artifactType = typeof parsed.artifactType === "string" ? parsed.artifactType : undefined;
    return {
      descriptor: { mediaType, digest, size: bytes.length, ...(artifactType === undefined ? {} : { artifactType }) },
      ...(subject === undefined ? {} : { subject }),
    };
  }

  /** `HEAD` of a blob: its descriptor, or undefined when the registry does not have it. */
  async headBlob(repository: Reference | string, digest: string): Promise<Descriptor | undefined> {
    const blob = blobRead(referenceOf(repository), digest, "HEAD");
    const response = await this.#exchange(blob);
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw registryError(response.status, "", blob.what);
    const size = Number(response.headers["content-length"] ?? Number.NaN);
    return { mediaType: "application/octet-stream", digest, size };
  }

  /**
   * Check a blob's content without keeping it: its bytes are hashed as they stream (a chunk in
   * memory at a time, whatever the blob's size) and must hash to `digest`, and be `size` bytes
   * when that is given. Returns how many bytes were read; OCI_NOT_FOUND when the registry lacks
   * it, OCI_DIGEST_MISMATCH when its content is not the digest's. The answer's deadline is an
   * hour; the client's timeout bounds a stall (nothing received for that long).
   */
  async verifyBlob(
    repository: Reference | string,
    digest: string,
    options: { size?: number } = {},
  ): Promise<{ size: number }> {
    const blob = blobRead(referenceOf(repository), digest, "GET");
    const { what } = blob;
    if (!isDigest(digest)) throw registryError(0, "", what, `${JSON.stringify(digest)} is not a digest`);
    const algorithm = digest.slice(0, digest.indexOf(":"));
    let hash: Hash | undefined;
    let read = 0;
    let response: HttpResponse;
    try {
      response = await this.#exchange({
        ...blob,
        // A body longer than the size it should have is not read to its end.
        maxBytes: options.size ?? Number.POSITIVE_INFINITY,
        timeoutMs: 3_600_000,
        stallTimeoutMs: this.#timeoutMs,
        sink: () => {
          const attempt = createHash(algorithm);
          hash = attempt;
          read = 0;
          return new Writable({
            write(chunk: Buffer, _encoding, done) {
              attempt.update(chunk);
              read += chunk.length;
              done();
            },
          });
        },
      });
    } catch (error) {
      if (options.size !== undefined && error instanceof UserError && error.code === errorCodes.OCI_TOO_LARGE.code) {
        throw mismatch(what, digest, "", `is longer than its ${options.size} bytes`);
      }
      throw error;
    }
    if (response.status === 404) throw notFound(what);
    if (response.status !== 200 || hash === undefined) throw registryError(response.status, response.text(), what);
    const actual = `${algorithm}:${hash.digest("hex")}`;
    if (actual !== digest) throw mismatch(what, digest, actual);
    if (options.size !== undefined && read !== options.size) {
      throw mismatch(what, digest, actual, `is ${read} bytes, not ${options.size}`);
    }
    return { size: read };
  }

  /** Read a blob into memory (following a redirect to storage) and check it hashes to `digest`. */
  async getBlob(
    repository: Reference | string,
    digest: string,
    options: { maxBytes?: number } = {},
  ): Promise<Uint8Array> {
    const blob = blobRead(referenceOf(repository), digest, "GET");
    const { what } = blob;
    if (!isDigest(digest)) throw registryError(0, "", what, `${JSON.stringify(digest)} is not a digest`);
    const response = await this.#exchange({ ...blob, maxBytes: options.maxBytes ?? this.#maxBlob });
    if (response.status === 404) throw notFound(what);
    if (response.status !== 200) throw registryError(response.status, response.text(), what);
    const bytes = response.body;
    const actual = digestOf(bytes, digest);
    if (actual !== digest) throw mismatch(what, digest, actual);
    return bytes;
  }

  /** Upload a blob (POST, then one monolithic PUT) unless the registry already has it. */
  async pushBlob(
    repository: Reference | string,
    bytes: Uint8Array,
    mediaType = "application/octet-stream",
  ): Promise<Descriptor> {
    const ref = referenceOf(repository);
    const digest = digestOf(bytes);
    const descriptor: Descriptor = { mediaType, digest, size: bytes.length };
    if ((await this.headBlob(ref, digest)) !== undefined) return descriptor;
    const what = `blob upload to ${ref.registry}/${ref.repository}`;
    const scope: Scope = { repository: ref.repository, actions: "pull,push" };
    const started = await this.#exchange({
      registry: ref.registry,
      method: "POST",
      target: `/v2/${ref.repository}/blobs/uploads/`,
      headers: { "content-length": "0" },
      body: new Uint8Array(),
      scope,
      what,
    });
    const location = started.headers.location;
    if (started.status !== 202 || location === undefined) throw registryError(started.status, started.text(), what);
    const url = new URL(location, started.url);
    url.searchParams.set("digest", digest);
    const finished = await this.#exchange({
      registry: ref.registry,
      method: "PUT",
      target: url.href,
      headers: { "content-type": "application/octet-stream" },
      body: bytes,
      scope,
      what,
    });
    if (finished.status !== 201) throw registryError(finished.status, finished.text(), what);
    const stored = finished.headers["docker-content-digest"];
    if (stored !== undefined && stored !== digest) throw mismatch(what, digest, stored);
    return descriptor;
  }

  /**
   * The manifests that name `subject` as their subject: from the referrers API, or, where
   * the registry has none (it answers 404), from the index under the `sha256-<hex>` tag.
   * Filtered by `artifactType` here when the registry did not filter.
   */
  async referrers(
    repository: Reference | string,
    subject: string,
    options: { artifactType?: string } = {},
  ): Promise<Referrers> {
    const ref = referenceOf(repository);
    const filter = async (descriptors: Descriptor[]): Promise<Descriptor[]> => {
      const wanted = options.artifactType;
      if (wanted === undefined) return descriptors;
      const checked = await Promise.all(
        descriptors.map(async (d) => {
          if (d.artifactType === wanted) return d;
          // Some registries (go-containerregistry's) report the config media type as the
          // artifactType; an empty config says nothing, so the manifest itself is asked.
          if (d.artifactType !== undefined && d.artifactType !== MediaType.Empty) return undefined;
          const read = await this.getManifest({ registry: ref.registry, repository: ref.repository, digest: d.digest });
          const config = read.manifest.config as { mediaType?: unknown } | undefined;
          const actual =
            read.descriptor.artifactType ?? (typeof config?.mediaType === "string" ? config.mediaType : undefined);
          return actual === wanted ? { ...d, artifactType: actual } : undefined;
        }),
      );
      return checked.filter((d): d is Descriptor => d !== undefined);
    };
    const fromApi = await this.#referrersFromApi(ref, subject, options.artifactType);
    if (fromApi !== undefined) return { descriptors: await filter(fromApi), via: "api" };
    const tag = fallbackTag(subject);
    let index: FetchedManifest;
    try {
      index = await this.getManifest({ registry: ref.registry, repository: ref.repository, tag });
    } catch (error) {
      if (error instanceof UserError && error.code === errorCodes.OCI_NOT_FOUND.code)
        return { descriptors: [], via: "tag" };
      throw error;
    }
    return { descriptors: await filter(descriptorsOf(index.manifest, `referrers tag ${tag}`)), via: "tag" };
  }

  /**
   * Push a manifest that names a subject and make it findable as a referrer: registries
   * with the referrers API index it themselves; for the others, the `sha256-<hex>` tag's
   * index gains its descriptor, as cosign and oras do.
   */
  async attachReferrer(
    repository: Reference | string,
    manifest: Readonly<Record<string, unknown>> & { subject: Descriptor },
  ): Promise<{ descriptor: Descriptor; via: "api" | "tag" }> {
    const ref = referenceOf(repository);
    const pushed = await this.putManifest(ref, manifest);
    const subject = manifest.subject.digest;
    const annotations = manifest.annotations as Record<string, string> | undefined;
    const descriptor: Descriptor = {
      ...pushed.descriptor,
      ...(annotations === undefined ? {} : { annotations }),
    };
    if (pushed.subject === subject) return { descriptor, via: "api" };
    if ((await this.#referrersFromApi(ref, subject, undefined)) !== undefined) return { descriptor, via: "api" };
    const tag = fallbackTag(subject);
    let existing: Descriptor[] = [];
    try {
      existing = descriptorsOf(
        (await this.getManifest({ registry: ref.registry, repository: ref.repository, tag })).manifest,
        tag,
      );
    } catch (error) {
      if (!(error instanceof UserError && error.code === errorCodes.OCI_NOT_FOUND.code)) throw error;
    }
    if (!existing.some((d) => d.digest === descriptor.digest)) {
      await this.putManifest(
        { registry: ref.registry, repository: ref.repository },
        { schemaVersion: 2, mediaType: MediaType.ImageIndex, manifests: [...existing, descriptor] },
        { tag, mediaType: MediaType.ImageIndex },
      );
    }
    return { descriptor, via: "tag" };
  }

  // ---- internals ------------------------------------------------------------------------

  async #referrersFromApi(
    ref: Reference,
    subject: string,
    artifactType: string | undefined,
  ): Promise<Descriptor[] | undefined> {
    const known = this.#referrersApi.get(ref.registry);
    if (known === false) return undefined;
    const what = `referrers of ${ref.registry}/${ref.repository}@${subject}`;
    const descriptors: Descriptor[] = [];
    let target = `/v2/${ref.repository}/referrers/${subject}${artifactType === undefined ? "" : `?artifactType=${encodeURIComponent(artifactType)}`}`;
    for (let page = 0; page < 100; page++) {
      const response = await this.#exchange({
        registry: ref.registry,
        method: "GET",
        target,
        headers: { accept: MediaType.ImageIndex },
        scope: { repository: ref.repository, actions: "pull" },
        what,
        maxBytes: this.#maxManifest,
      });
      if (response.status === 404 && page === 0) {
        // 404 is how a registry without the API answers (one with it must not); remembered when
        // the repository exists, so a registry that lacks the API is asked once.
        if (known === undefined) this.#referrersApi.set(ref.registry, false);
        return undefined;
      }
      if (response.status !== 200) throw registryError(response.status, response.text(), what);
      this.#referrersApi.set(ref.registry, true);
      const index = checkManifest(this.#json(response.body, what), MediaType.ImageIndex, what);
      descriptors.push(...descriptorsOf(index, what));
      const next = /<([^>]+)>\s*;\s*rel="?next"?/.exec(response.headers.link ?? "")?.[1];
      if (next === undefined) break;
      target = new URL(next, response.url).href;
    }
    return descriptors;
  }

  /** `HEAD` or `GET` (its body capped) of a manifest by tag or digest: its 200 answer; 404 is OCI_NOT_FOUND. */
  async #manifest(ref: Reference, method: "HEAD" | "GET"): Promise<{ response: HttpResponse; what: string }> {
    const what = `manifest ${formatReference(ref)}`;
    const response = await this.#exchange({
      registry: ref.registry,
      method,
      target: `/v2/${ref.repository}/manifests/${manifestIdentifier(ref)}`,
      headers: { accept: MANIFEST_MEDIA_TYPES.join(", ") },
      scope: { repository: ref.repository, actions: "pull" },
      what,
      ...(method === "GET" ? { maxBytes: this.#maxManifest } : {}),
    });
    if (response.status === 404) throw notFound(what);
    if (response.status !== 200) throw registryError(response.status, method === "GET" ? response.text() : "", what);
    return { response, what };
  }

  #base(registry: string): URL {
    return new URL(`${this.#plainHttp(registry) ? "http" : "https"}://${registry}`);
  }

  /** One request, with its challenge answered: up front when the registry's scheme is known, else after a 401. */
  async #exchange(exchange: Exchange): Promise<HttpResponse> {
    const url = exchange.target.startsWith("/")
      ? new URL(exchange.target, this.#base(exchange.registry))
      : new URL(exchange.target);
    const known = this.#challenges.get(exchange.registry);
    let authorization =
      known === undefined ? undefined : await this.#authorization(exchange.registry, known, exchange.scope, false);
    const response = await this.#send(
      url,
      {
        method: exchange.method,
        ...(exchange.headers === undefined ? {} : { headers: exchange.headers }),
        ...(exchange.body === undefined ? {} : { body: exchange.body }),
        ...(exchange.maxBytes === undefined ? {} : { maxBytes: exchange.maxBytes }),
        ...(exchange.sink === undefined ? {} : { sink: exchange.sink }),
        ...(exchange.timeoutMs === undefined ? {} : { timeoutMs: exchange.timeoutMs }),
        ...(exchange.stallTimeoutMs === undefined ? {} : { stallTimeoutMs: exchange.stallTimeoutMs }),
        authorization: () => authorization,
        onUnauthorized: async (answer) => {
          const text = answer.text();
          const challenge = parseChallenges(answer.headers["www-authenticate"] ?? "")[0];
          if (challenge === undefined)
            throw this.#refused(exchange, "it answered 401 without a WWW-Authenticate challenge", text);
          const retrying = authorization !== undefined;
          this.#challenges.set(exchange.registry, challenge);
          const fresh = await this.#authorization(exchange.registry, challenge, exchange.scope, true);
          if (fresh === undefined)
            throw this.#refused(exchange, "it asks for credentials and none were found for it", text);
          // The same Basic credential again would only be refused again.
          if (retrying && fresh === authorization && challenge.scheme === "basic") return false;
          authorization = fresh;
          return true;
        },
      },
      exchange.what,
    );
    if (response.status === 401) throw this.#refused(exchange, "it refused the credentials", response.text());
    if (response.status === 403) throw this.#refused(exchange, "it denied access", response.text());
    return response;
  }

  async #authorization(
    registry: string,
    challenge: Challenge,
    scope: Scope | undefined,
    fresh: boolean,
  ): Promise<string | undefined> {
    const credential = await this.#credentials.get(registry);
    if (credential !== undefined) {
      this.#secrets?.add(credential.password);
    }
    if (challenge.scheme === "basic") {
      return credential === undefined ? undefined : basic(credential);
    }
    if (challenge.scheme !== "bearer") return undefined;
    const realm = challenge.params.realm;
    if (realm === undefined) return undefined;
    const scopeText = scope === undefined ? challenge.params.scope : `repository:${scope.repository}:${scope.actions}`;
    const service = challenge.params.service;
    const key = `${realm}|${service ?? ""}|${scopeText ?? ""}`;
    const cached = this.#tokens.get(key);
    if (!fresh && cached !== undefined && cached.expiresAt > this.#now()) return `Bearer ${cached.token}`;
    const token = await this.#fetchToken(registry, realm, service, scopeText, credential);
    this.#tokens.set(key, token);
    return `Bearer ${token.token}`;
  }

  async #fetchToken(
    registry: string,
    realm: string,
    service: string | undefined,
    scope: string | undefined,
    credential: Credential | undefined,
  ): Promise<{ token: string; expiresAt: number }> {
    let url: URL;
    try {
      url = new URL(realm);
    } catch {
      throw registryError(0, "", `registry ${registry}`, `its token realm ${JSON.stringify(realm)} is not a URL`);
    }
    this.#checkRealm(registry, url, credential !== undefined);
    if (service !== undefined) url.searchParams.set("service", service);
    if (scope !== undefined) for (const one of scope.split(" ")) url.searchParams.append("scope", one);
    const what = `token endpoint ${url.origin}${url.pathname} for ${registry}`;
    const response = await this.#send(
      url,
      {
        method: "GET",
        ...(credential === undefined ? {} : { headers: { authorization: basic(credential) } }),
        maxBytes: this.#maxManifest,
        overflow: "fail",
      },
      what,
    );
    if (response.status === 401 || response.status === 403) {
      const text = response.text();
      throw new UserError(
        errorCodes.OCI_AUTH_REFUSED,
        `the ${what} refused to issue a token (HTTP ${response.status})`,
        {
          why: `${credential === undefined ? "No credentials were sent (none were found for this registry)." : `The credentials for user ${JSON.stringify(credential.username)} were refused.`}${text ? ` It said: ${registrySaid(text)}` : ""}`,
          next: "Check the user name and password for this registry in the environment or the docker/helm registry config, and that they may pull (and push) this repository.",
          facts: { registry, status: response.status },
        },
      );
    }
    if (response.status !== 200) throw registryError(response.status, response.text(), what);
    const body = this.#json(response.body, what);
    const token =
      typeof body.token === "string"
        ? body.token
        : typeof body.access_token === "string"
          ? body.access_token
          : undefined;
    if (token === undefined || token === "") throw registryError(200, "", what, "its answer holds no token");
    this.#secrets?.add(token);
    const expiresIn = typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : 60;
    // Refreshed a little early, so a token does not expire between the check and the request.
    return { token, expiresAt: this.#now() + Math.max(expiresIn - 10, expiresIn / 2) * 1000 };
  }

  /**
   * A Bearer challenge names where to ask for a token, and the registry's credentials go
   * there: only to the registry's own host name and scheme (a token service on another port
   * of it is the same operator's), or to a host the caller allows, with a warning.
   */
  #checkRealm(registry: string, realm: URL, withCredentials: boolean): void {
    const base = this.#base(registry);
    if (realm.protocol === base.protocol && realm.hostname === base.hostname) return;
    const allowed = this.#allowTokenRealms.some((host) => host === realm.host || host === realm.hostname);
    const where = realm.protocol !== base.protocol ? `over ${realm.protocol.replace(":", "")}` : "on another host";
    if (!allowed || (realm.protocol === "http:" && base.protocol === "https:")) {
      throw new UserError(
        errorCodes.OCI_TOKEN_REALM_REFUSED,
        `${registry} asks for its tokens to be fetched from ${realm.origin}, ${where}; nothing was sent there`,
        {
          why: `A registry's Bearer challenge names the token service, and the registry's credentials${withCredentials ? "" : " (none were found for it here)"} would go to it: only one on the registry's own host and scheme is used unless it is allowed${realm.protocol === "http:" && base.protocol === "https:" ? "; a plain-http realm for an https registry never is" : ""}.`,
          next: `If ${realm.host} is this registry's token service, allow it; otherwise the registry's answers may have been tampered with.`,
          facts: { registry, realm: realm.origin },
        },
      );
    }
    if (!this.#warned.has(realm.origin)) {
      this.#warned.add(realm.origin);
      this.#onWarning(
        `${registry} fetches its tokens from ${realm.origin} (${where}, as allowed): ${withCredentials ? "the registry's credentials are sent there" : "no credentials are sent there"}`,
      );
    }
  }

  /**
   * One HTTP exchange through @nodekit/http: one deadline for the whole answer; a read retried
   * on 429/5xx as Retry-After says; a read's redirect followed anywhere that keeps https (blob
   * GETs go to object storage), without the Authorization header once it leaves the origin; a
   * write's redirect not followed. Bodies are capped: `maxBytes` for what is read, 64 KiB of
   * anything else (an error's body, an answer read only to be quoted).
   */
  async #send(
    url: URL,
    init: {
      method: Method;
      headers?: Record<string, string>;
      body?: Uint8Array;
      maxBytes?: number;
      overflow?: "fail" | "truncate";
      sink?: () => Writable;
      timeoutMs?: number;
      stallTimeoutMs?: number;
      authorization?: () => string | undefined;
      onUnauthorized?: (response: HttpResponse) => Promise<boolean>;
    },
    what: string,
  ): Promise<HttpResponse> {
    const read = init.method === "GET" || init.method === "HEAD";
    try {
      return await request({
        url,
        method: init.method,
        headers: { "user-agent": this.#userAgent, ...init.headers },
        ...(init.body === undefined ? {} : { body: init.body }),
        transport: this.#transport,
        timeoutMs: init.timeoutMs ?? this.#timeoutMs,
        ...(init.stallTimeoutMs === undefined ? {} : { stallTimeoutMs: init.stallTimeoutMs }),
        ...(init.sink === undefined ? {} : { sink: init.sink }),
        // Digests are over the bytes as stored: never unpacked on the way.
        decode: false,
        maxBodyBytes: init.maxBytes ?? 64 * 1024,
        overflow: init.overflow ?? (init.maxBytes === undefined ? "truncate" : "fail"),
        redirect: read
          ? (from, to) =>
              from.protocol === "https:" && to.protocol !== "https:" ? "it would leave https for plain http" : true
          : "manual",
        retry: {
          ...(this.#retry?.attempts === undefined ? {} : { attempts: this.#retry.attempts }),
          ...(this.#retry?.maxWaitMs === undefined ? {} : { maxWaitMs: this.#retry.maxWaitMs }),
        },
        now: this.#now,
        ...(this.#sleep === undefined ? {} : { sleep: this.#sleep }),
        ...(init.authorization === undefined ? {} : { authorization: init.authorization }),
        ...(init.onUnauthorized === undefined ? {} : { onUnauthorized: init.onUnauthorized }),
      });
    } catch (error) {
      if (error instanceof UserError && !(error instanceof TransportError)) throw error;
      throw this.#unreachable(url, what, error);
    }
  }

  #json(bytes: Uint8Array, what: string): Record<string, unknown> {
    try {
      const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
      if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // reported below
    }
    throw registryError(200, "", what, "what it served is not a JSON object");
  }

  /** A failure below the answer (classified by @nodekit/http) in the client's codes. */
  #unreachable(url: URL, what: string, error: unknown): UserError {
    const failure = classifyTransportError(error);
    const target = `${url.protocol}//${url.host}`;
    if (failure.class === "tls") {
      return new UserError(
        errorCodes.OCI_TLS_UNTRUSTED,
        `could not reach the ${what}: ${target} presented a certificate that is not trusted (${failure.code})`,
        {
          why: "The certificate is not signed by a CA this client trusts, or it does not name this host.",
          next: "Give the registry's CA certificate (PEM) as the trusted CA, or use the host name the certificate names.",
          facts: { url: target },
          cause: error,
        },
      );
    }
    if (failure.class === "too-large") return tooLarge(what, failure.limitBytes ?? 0);
    if (failure.class === "redirect") {
      return registryError(0, "", what, `a redirect that was not followed (${(error as Error).message})`);
    }
    const timedOut = failure.class === "timeout";
    return new UserError(
      errorCodes.OCI_UNREACHABLE,
      timedOut
        ? `the ${what} did not answer within ${this.#timeoutMs / 1000} s (${target})`
        : `could not reach the ${what} at ${target}`,
      {
        why: timedOut ? "The request's deadline passed." : failure.reason,
        next: "Check the registry address and port, and that the registry is running and reachable from this machine.",
        facts: { url: target },
        cause: error,
      },
    );
  }

  #refused(exchange: Exchange, reason: string, text: string): UserError {
    return new UserError(
      errorCodes.OCI_AUTH_REFUSED,
      `${exchange.registry} refused access to the ${exchange.what}: ${reason}`,
      {
        ...(text ? { why: `It said: ${registrySaid(text)}` } : {}),
        next: `Check the credentials for ${exchange.registry} (environment, or the docker/helm registry config) and that they grant ${exchange.scope?.actions ?? "pull"} on ${exchange.scope?.repository ?? "the registry"}.`,
        facts: { registry: exchange.registry },
      },
    );
  }
}

function basic(credential: Credential): string {
  return `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString("base64")}`;
}

/** `sha256:abc…` → `sha256-abc…`, the referrers tag schema's tag. */
export function fallbackTag(digest: string): string {
  return digest.replace(":", "-");
}

function descriptorsOf(index: Readonly<Record<string, unknown>>, what: string): Descriptor[] {
  const manifests = index.manifests;
  if (!Array.isArray(manifests)) throw registryError(200, "", what, "it is an index without a manifests list");
  return manifests.filter(
    (d): d is Descriptor =>
      typeof d === "object" &&
      d !== null &&
      typeof d.digest === "string" &&
      typeof d.mediaType === "string" &&
      typeof d.size === "number",
  );
}

function notFound(what: string): UserError {
  return new UserError(errorCodes.OCI_NOT_FOUND, `the registry has no ${what}`, {
    next: "Check the repository, tag and digest; the artifact may not have been pushed, or was deleted.",
  });
}

/** `actual`: the digest the content hashes to, or (`served`) what else is wrong with it (its length). */
function mismatch(what: string, expected: string, actual: string, served = `hashes to ${actual}`): UserError {
  return new UserError(errorCodes.OCI_DIGEST_MISMATCH, `the ${what} does not match its digest`, {
    why: `Asked for ${expected}; the content served ${served}. The registry's storage was changed, or something between here and the registry altered the content.`,
    next: "Do not use this content. Ask the registry's operator to check its storage, or pull from a registry you trust.",
    facts: { expected, ...(actual === "" ? {} : { actual }) },
  });
}

function tooLarge(what: string, cap: number): UserError {
  return new UserError(
    errorCodes.OCI_TOO_LARGE,
    `the ${what} is larger than ${formatBytes(cap)}, the most read of it`,
    {
      why: "Content past the size cap is not read, so that a registry cannot exhaust this process's memory.",
      next: "Check that the reference names what you meant; a manifest is normally a few kilobytes.",
      facts: { limitBytes: cap },
    },
  );
}

function registryError(status: number, text: string, what: string, reason?: string): UserError {
  // 429 and 5xx are "try again" (a read got its retries already); anything else is the registry's refusal.
  const busy = status === 429 || status >= 500;
  return new UserError(
    busy ? errorCodes.OCI_REGISTRY_UNAVAILABLE : errorCodes.OCI_REGISTRY_ERROR,
    `the registry answered the request for the ${what} with ${reason ?? `HTTP ${status}`}`,
    {
      ...(text ? { why: `It said: ${registrySaid(text)}` } : {}),
      next: busy
        ? "Try again later; a read was already retried as the registry asked."
        : "Check the reference; if it is right, the registry's own logs say more.",
      ...(status ? { facts: { status } } : {}),
    },
  );
}
