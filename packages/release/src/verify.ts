import type { KeyObject } from "node:crypto";
import { invalidInput, UserError } from "@nodekit/errors";
import { formatReference, type OciClient, ociErrorCodes, parseReference, type Reference } from "@nodekit/oci";
import { bundleFromJSON } from "@sigstore/bundle";
import { TrustedRoot } from "@sigstore/protobuf-specs";
import {
  PolicyError,
  type TrustMaterial,
  toSignedEntity,
  toTrustMaterial,
  VerificationError,
  Verifier,
} from "@sigstore/verify";
import { listedArtifacts, parseReleaseDescription, type ReleaseDescription } from "./description.ts";
import { errorCodes } from "./errors.ts";
import {
  IN_TOTO_PAYLOAD_TYPE,
  RELEASE_ARTIFACT_TYPE,
  RELEASE_DESCRIPTION_MEDIA_TYPE,
  SIGSTORE_BUNDLE_ARTIFACT_TYPE,
} from "./media-types.ts";
import type { ReleasePolicy } from "./policy.ts";

export interface FetchReleaseOptions {
  client: OciClient;
  /** `registry/repository:tag` or `…@sha256:…`. */
  reference: string;
}

export interface FetchedRelease {
  /** `registry/repository@sha256:…`: the manifest the tag resolved to. */
  readonly reference: string;
  readonly digest: string;
  readonly description: ReleaseDescription;
  /** The description exactly as published. */
  readonly bytes: Uint8Array;
}

export interface VerifiedRelease extends FetchedRelease {
  /** Who signed: the trusted key's name, or the certificate identity. */
  readonly signer: string;
  /** How many pinned artifacts were found in the registry at their digests. */
  readonly artifactsChecked: number;
}

export interface VerifyReleaseOptions extends FetchReleaseOptions {
  policy: ReleasePolicy;
  /** How many artifact checks run at once; default 16. */
  concurrency?: number;
}

/** OCI client errors, restated as the release failure classes. */
function restate(error: unknown, what: string): never {
  if (!(error instanceof UserError)) throw error;
  const classes: Record<string, (typeof errorCodes)[keyof typeof errorCodes]> = {
    [ociErrorCodes.OCI_UNREACHABLE.code]: errorCodes.RELEASE_REGISTRY_UNREACHABLE,
    [ociErrorCodes.OCI_TLS_UNTRUSTED.code]: errorCodes.RELEASE_REGISTRY_UNREACHABLE,
    [ociErrorCodes.OCI_REGISTRY_UNAVAILABLE.code]: errorCodes.RELEASE_REGISTRY_UNREACHABLE,
    [ociErrorCodes.OCI_AUTH_REFUSED.code]: errorCodes.RELEASE_REGISTRY_AUTH_REFUSED,
    [ociErrorCodes.OCI_DIGEST_MISMATCH.code]: errorCodes.RELEASE_DIGEST_MISMATCH,
    [ociErrorCodes.OCI_NOT_FOUND.code]: errorCodes.RELEASE_NOT_FOUND,
  };
  const code = classes[error.code];
  if (code === undefined) throw error;
  throw new UserError(code, `${what}: ${error.message}`, {
    why: error.why,
    next: error.next,
    facts: error.facts,
    cause: error,
  });
}

/**
 * Read a release description: resolve the tag, read the manifest and its one layer, each
 * checked against its digest, and parse it. Verifies no signature.
 */
export async function fetchRelease(options: FetchReleaseOptions): Promise<FetchedRelease> {
  const { client } = options;
  const ref = parseReference(options.reference);
  const what = `release ${options.reference}`;
  try {
    const manifestRead = await client.getManifest(ref);
    const digest = manifestRead.descriptor.digest;
    const pinned: Reference = { registry: ref.registry, repository: ref.repository, digest };
    const manifest = manifestRead.manifest as {
      artifactType?: unknown;
      layers?: Array<{ mediaType?: unknown; digest?: unknown }>;
    };
    const layer = manifest.layers?.find((l) => l.mediaType === RELEASE_DESCRIPTION_MEDIA_TYPE);
    if (manifest.artifactType !== RELEASE_ARTIFACT_TYPE || layer === undefined || typeof layer.digest !== "string") {
      throw new UserError(errorCodes.RELEASE_NOT_A_RELEASE, `${options.reference} is not a release description`, {
        why: `Its manifest has artifactType ${JSON.stringify(manifest.artifactType ?? null)}; a release has ${RELEASE_ARTIFACT_TYPE} and one ${RELEASE_DESCRIPTION_MEDIA_TYPE} layer.`,
        next: "Check the reference: it should name the release, not one of the charts or images it lists.",
      });
    }
    const bytes = await client.getBlob(pinned, layer.digest, { maxBytes: 16 * 1024 * 1024 });
    const source = `${formatReference(pinned)} (release description)`;
    const parsed = parseReleaseDescription(new TextDecoder().decode(bytes), { source });
    if (parsed.value === undefined) {
      throw invalidInput(
        errorCodes.RELEASE_INVALID,
        source,
        parsed.problems,
        "Ask the publisher to fix and republish the release.",
        "nothing was installed",
      );
    }
    return { reference: formatReference(pinned), digest, description: parsed.value, bytes };
  } catch (error) {
    restate(error, what);
  }
}

function trustMaterialFor(policy: ReleasePolicy, onlyKey?: KeyObject): TrustMaterial {
  const root =
    policy.trustedRoot ??
    TrustedRoot.fromJSON({
      mediaType: "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
      tlogs: [],
      certificateAuthorities: [],
      ctlogs: [],
      timestampAuthorities: [],
    });
  return toTrustMaterial(root, (hint: string) => {
    const key = onlyKey ?? policy.keys.find((k) => k.hint === hint)?.key;
    if (key === undefined) {
      throw new VerificationError({ code: "PUBLIC_KEY_ERROR", message: `no trusted key has the hint ${hint}` });
    }
    return { publicKey: key, validFor: () => true };
  });
}

type Outcome = { ok: true; signer: string } | { ok: false; kind: "untrusted" | "invalid" | "unmet"; reason: string };

type Bundle = ReturnType<typeof bundleFromJSON>;
type Identity = ReleasePolicy["identities"][number];

/** What the policy requires of a bundle beyond its signature, and the bundle lacks: named by the setting. */
function missingEvidence(bundle: Bundle, policy: ReleasePolicy): string | undefined {
  const material = bundle.verificationMaterial;
  const tlogEntries = material.tlogEntries ?? [];
  // The bundle as checked (asChecked): under `transparencyLog: none` it has no entries, so a
  // log's integrated time is a timestamp only when the log is required.
  const rfc3161 = material.timestampVerificationData?.rfc3161Timestamps ?? [];
  if (policy.timestamps === "required" && rfc3161.length === 0 && !tlogEntries.some((e) => e.inclusionPromise)) {
    return `it carries no timestamp, and ${policy.source} requires one (timestamps: required)`;
  }
  if (policy.transparencyLog === "required" && tlogEntries.length === 0) {
    return `it carries no transparency-log entry, and ${policy.source} requires one (transparencyLog: required)`;
  }
  return undefined;
}

/**
 * The bundle as the policy has it checked. Under `transparencyLog: none` its log entries are
 * left out: not checked against any log, not counted, their integrated time no timestamp, as
 * cosign's `--insecure-ignore-tlog` and sigstore-go without a log threshold ignore them.
 * @sigstore/verify checks every entry a bundle carries whatever `tlogThreshold` says, so a
 * key-signed bundle logged by cosign's default would otherwise fail against a root naming no
 * log. Under `required` every entry is checked, and one that fails refuses the bundle.
 */
function asChecked(bundle: Bundle, policy: ReleasePolicy): Bundle {
  if (policy.transparencyLog === "required") return bundle;
  return { ...bundle, verificationMaterial: { ...bundle.verificationMaterial, tlogEntries: [] } };
}

/** Exact, or a regular expression the whole value must match (so `.*@nvkr\.example` cannot match a longer name). */
function matches(exact: string | undefined, pattern: string | undefined, value: string | undefined): boolean {
  if (value === undefined) return false;
  if (exact !== undefined) return value === exact;
  return pattern !== undefined && new RegExp(`^(?:${pattern})$`).test(value);
}

const describeIdentity = (identity: Identity) =>
  `${identity.subject ?? `/${identity.subjectRegExp}/`} (issuer ${identity.issuer ?? `/${identity.issuerRegExp}/`})`;

/** Verify one bundle (JSON) against the policy, for the manifest `digest`. Never throws for a bad bundle. */
export function verifyBundle(bundleJson: unknown, digest: string, policy: ReleasePolicy): Outcome {
  let bundle: Bundle;
  try {
    bundle = asChecked(bundleFromJSON(bundleJson), policy);
  } catch (error) {
    return { ok: false, kind: "invalid", reason: `the bundle is malformed (${(error as Error).message})` };
  }
  const options = {
    tlogThreshold: policy.transparencyLog === "required" ? 1 : 0,
    timestampThreshold: policy.timestamps === "required" ? 1 : 0,
    ctlogThreshold: policy.transparencyLog === "required" ? 1 : 0,
  };
  const material = bundle.verificationMaterial.content;
  const missing = missingEvidence(bundle, policy);
  if (missing !== undefined) return { ok: false, kind: "unmet", reason: missing };
  let signer: string;
  try {
    const entity = toSignedEntity(bundle);
    if (material.$case === "publicKey") {
      const hint = material.publicKey.hint;
      const named = policy.keys.find((k) => k.hint === hint);
      if (hint && named === undefined) {
        return {
          ok: false,
          kind: "untrusted",
          reason: `it is signed by a key the policy does not trust (hint ${hint})`,
        };
      }
      // No hint: try each trusted key.
      const candidates = named ? [named] : policy.keys;
      let last: unknown;
      let found: string | undefined;
      for (const candidate of candidates) {
        try {
          new Verifier(trustMaterialFor(policy, candidate.key), options).verify(entity);
          found = candidate.name;
          break;
        } catch (error) {
          last = error;
        }
      }
      if (found === undefined) {
        if (candidates.length === 0)
          return { ok: false, kind: "untrusted", reason: "it is signed with a key and the policy trusts none" };
        throw last;
      }
      signer = `key ${found}`;
    } else {
      if (policy.identities.length === 0) {
        return {
          ok: false,
          kind: "untrusted",
          reason: "it is signed with a certificate and the policy trusts no certificate identity",
        };
      }
      // The chain (to a CA in the trusted root, at the verified time), the timestamps and the
      // signature, once; then the certificate's identity against each the policy trusts.
      const result = new Verifier(trustMaterialFor(policy), options).verify(entity);
      const subject = result.identity?.subjectAlternativeName;
      const issuer = result.identity?.extensions?.issuer;
      const identity = policy.identities.find(
        (id) => matches(id.subject, id.subjectRegExp, subject) && matches(id.issuer, id.issuerRegExp, issuer),
      );
      if (identity === undefined) {
        return {
          ok: false,
          kind: "untrusted",
          reason: `its certificate names ${subject ?? "no subject"} (issuer ${issuer ?? "none"}), and the policy trusts only ${policy.identities.map(describeIdentity).join(", ")}`,
        };
      }
      signer = `${subject} (issuer ${issuer})`;
    }
  } catch (error) {
    if (error instanceof PolicyError) {
      return {
        ok: false,
        kind: "untrusted",
        reason: `its certificate identity is not one the policy trusts (${error.message})`,
      };
    }
    if (error instanceof VerificationError) {
      // With the log required, a certificate must carry a CT log's SCT too (as cosign requires
      // of a Fulcio certificate); @sigstore/verify tells that shortfall only by its message.
      if (
        error.code === "CERTIFICATE_ERROR" &&
        /\bSCTs?\b/.test(error.message) &&
        policy.transparencyLog === "required"
      ) {
        return {
          ok: false,
          kind: "unmet",
          reason: `its certificate carries no signed certificate timestamp that verifies against the CT logs in the policy's trusted root, and the policy requires the transparency log (transparencyLog: required; ${error.message})`,
        };
      }
      if (error.code === "CERTIFICATE_ERROR") {
        return {
          ok: false,
          kind: "untrusted",
          reason: `its certificate does not chain to a certificate authority in the policy's trusted root at the time it signed (${error.message})`,
        };
      }
      if (error.code === "TIMESTAMP_ERROR" && policy.timestamps === "required") {
        return {
          ok: false,
          kind: "unmet",
          reason: `its timestamp does not verify against the timestamp authorities in the policy's trusted root, and the policy requires one (timestamps: required; ${error.message})`,
        };
      }
      // @sigstore/verify names each way an entry fails (TLOG_BODY_ERROR, TLOG_INCLUSION_PROOF_ERROR,
      // TLOG_INCLUSION_PROMISE_ERROR, …): any of them leaves the policy's requirement unmet.
      if (error.code.startsWith("TLOG_") && policy.transparencyLog === "required") {
        const what =
          error.code === "TLOG_BODY_ERROR"
            ? "records another signature than the bundle's"
            : "does not verify against the logs in the policy's trusted root";
        return {
          ok: false,
          kind: "unmet",
          reason: `its transparency-log entry ${what}, and the policy requires one (transparencyLog: required; ${error.code}: ${error.message})`,
        };
      }
      const kind = error.code === "PUBLIC_KEY_ERROR" ? "untrusted" : "invalid";
      return { ok: false, kind, reason: `${error.code}: ${error.message}` };
    }
    return { ok: false, kind: "invalid", reason: (error as Error).message };
  }
  // The signature is good; it must be over this manifest.
  if (bundle.content.$case === "dsseEnvelope") {
    const envelope = bundle.content.dsseEnvelope;
    if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
      return {
        ok: false,
        kind: "invalid",
        reason: `its DSSE payload is ${envelope.payloadType}, not an in-toto statement`,
      };
    }
    let statement: { subject?: Array<{ digest?: Record<string, string> }> };
    try {
      statement = JSON.parse(Buffer.from(envelope.payload).toString("utf8"));
    } catch {
      return { ok: false, kind: "invalid", reason: "its in-toto statement is not JSON" };
    }
    const [algorithm, hex] = digest.split(":") as [string, string];
    if (!statement.subject?.some((s) => s.digest?.[algorithm] === hex)) {
      return { ok: false, kind: "invalid", reason: `it signs another artifact, not ${digest}` };
    }
  } else {
    const signed = bundle.content.messageSignature.messageDigest;
    const [, hex] = digest.split(":") as [string, string];
    if (signed === undefined || Buffer.from(signed.digest).toString("hex") !== hex) {
      return { ok: false, kind: "invalid", reason: `its message signature is not over ${digest}` };
    }
  }
  return { ok: true, signer };
}

async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Verify a published release fully offline under a policy: resolve the tag, read the
 * description (every read checked against its digest), find its Sigstore bundles as
 * referrers, verify them against the policy's keys or identities, then check that every
 * artifact the description pins is in the registry at its digest.
 */
export async function verifyRelease(options: VerifyReleaseOptions): Promise<VerifiedRelease> {
  const { client, policy } = options;
  const release = await fetchRelease(options);
  const ref = parseReference(release.reference);
  const what = `release ${options.reference}`;

  let bundles: Array<{ digest: string; json: unknown }>;
  try {
    const { descriptors } = await client.referrers(ref, release.digest, {
      artifactType: SIGSTORE_BUNDLE_ARTIFACT_TYPE,
    });
    bundles = await Promise.all(
      descriptors.map(async (d) => {
        const manifest = await client.getManifest({ ...ref, digest: d.digest });
        const layers = (manifest.manifest.layers ?? []) as Array<{ mediaType?: string; digest?: string }>;
        const layer = layers.find(
          (l) =>
            l.mediaType === SIGSTORE_BUNDLE_ARTIFACT_TYPE ||
            l.mediaType?.startsWith("application/vnd.dev.sigstore.bundle"),
        );
        if (layer?.digest === undefined) return { digest: d.digest, json: undefined };
        const bytes = await client.getBlob(ref, layer.digest, { maxBytes: 4 * 1024 * 1024 });
        try {
          return { digest: d.digest, json: JSON.parse(new TextDecoder().decode(bytes)) as unknown };
        } catch {
          return { digest: d.digest, json: undefined };
        }
      }),
    );
  } catch (error) {
    restate(error, what);
  }
  if (bundles.length === 0) {
    throw new UserError(errorCodes.RELEASE_UNSIGNED, `${release.reference} is not signed`, {
      why: `The registry lists no ${SIGSTORE_BUNDLE_ARTIFACT_TYPE} referrer for it (neither through the referrers API nor the ${release.digest.replace(":", "-")} tag).`,
      next: "Do not install it. Ask the publisher to sign the release, or check that the reference names the release you meant.",
      facts: { digest: release.digest },
    });
  }
  const outcomes = bundles.map((b) =>
    b.json === undefined
      ? ({ ok: false, kind: "invalid", reason: "the referrer holds no readable bundle" } as Outcome)
      : verifyBundle(b.json, release.digest, policy),
  );
  const good = outcomes.find((o): o is Extract<Outcome, { ok: true }> => o.ok);
  if (good === undefined) {
    const failures = outcomes as Array<Extract<Outcome, { ok: false }>>;
    const reasons = failures.map((f, i) => `signature ${i + 1}: ${f.reason}`).join("; ");
    if (failures.some((f) => f.kind === "invalid")) {
      throw new UserError(
        errorCodes.RELEASE_SIGNATURE_INVALID,
        `the signature on ${release.reference} does not verify`,
        {
          why: reasons,
          next: "Do not install it: the signature or the release was altered. Ask the publisher to republish and re-sign it.",
          facts: { digest: release.digest },
        },
      );
    }
    if (failures.some((f) => f.kind === "unmet")) {
      throw new UserError(
        errorCodes.RELEASE_POLICY_UNMET,
        `the signature on ${release.reference} lacks what ${policy.source} requires of it`,
        {
          why: reasons,
          next: `Do not install it. Ask the publisher for a release signed with what the setting named above requires, from an authority in the policy's trusted root; change the setting in ${policy.source} only if you accept releases without it.`,
          facts: { digest: release.digest },
        },
      );
    }
    throw new UserError(
      errorCodes.RELEASE_UNTRUSTED_SIGNER,
      `${release.reference} is not signed by anyone ${policy.source} trusts`,
      {
        why: reasons,
        next: `Check that ${policy.source} lists the publisher's public key (or certificate identity); if it does, the release was signed by someone else.`,
        facts: { digest: release.digest },
      },
    );
  }

  const artifacts = listedArtifacts(release.description);
  let missing: typeof artifacts;
  try {
    const pinned = artifacts.map((artifact) => parseReference(`${artifact.repository}@${artifact.digest}`));
    // One token request for each registry's repositories (in batches), not one per repository.
    const byRegistry = new Map<string, string[]>();
    for (const ref of pinned) byRegistry.set(ref.registry, [...(byRegistry.get(ref.registry) ?? []), ref.repository]);
    await Promise.all([...byRegistry].map(([registry, repositories]) => client.authorizePull(registry, repositories)));
    const found = await pool(pinned, options.concurrency ?? 16, async (ref) => {
      return (await client.manifestExists(ref)) !== undefined;
    });
    missing = artifacts.filter((_, i) => !found[i]);
  } catch (error) {
    restate(error, what);
  }
  if (missing.length > 0) {
    const source = `${release.reference} (release description)`;
    throw new UserError(
      errorCodes.RELEASE_ARTIFACT_MISSING,
      `${missing.length} of the ${artifacts.length} artifacts ${release.reference} lists ${missing.length === 1 ? "is" : "are"} not in the registry at ${missing.length === 1 ? "its digest" : "their digests"}`,
      {
        problems: missing.map((m) => ({
          severity: "error" as const,
          source,
          path: m.field
            .split(/[.[\]]+/)
            .filter(Boolean)
            .map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
          value: `${m.repository}@${m.digest}`,
          message: "is not in the registry",
        })),
        next: "Do not install it. Ask the publisher to push the missing artifacts, or check that the registry is the one the release was published to.",
        facts: { digest: release.digest, missing: missing.length },
      },
    );
  }
  return { ...release, signer: good.signer, artifactsChecked: artifacts.length };
}
