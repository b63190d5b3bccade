import { invalidInput, UserError } from "@nodekit/errors";
import { formatReference, type OciClient, ociErrorCodes, parseReference, type Reference } from "@nodekit/oci";
import { assertContent, type ContentReport, checkArtifactContent } from "./content.ts";
import { listedArtifacts, parseReleaseDescription, type ReleaseDescription } from "./description.ts";
import { errorCodes } from "./errors.ts";
import { RELEASE_ARTIFACT_TYPE, RELEASE_DESCRIPTION_MEDIA_TYPE, SIGSTORE_BUNDLE_ARTIFACT_TYPE } from "./media-types.ts";
import type { ReleasePolicy } from "./policy.ts";
import type { Outcome } from "./signature.ts";

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
  /** How many pinned artifacts were read and found to hash to their digests, every byte. */
  readonly artifactsChecked: number;
  /** The distinct blobs (configs, layers) of those artifacts, each hashed as it streamed. */
  readonly blobsChecked: number;
  /** Their bytes. */
  readonly bytesChecked: number;
}

export interface VerifyReleaseOptions extends FetchReleaseOptions {
  policy: ReleasePolicy;
  /** How many reads (manifests and blobs) are in flight at once; default 16. */
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

/**
 * Verify one bundle (JSON) against the policy, for the manifest `digest`. Never throws for a
 * bad bundle. Loads @sigstore/verify on first use (signature.ts).
 */
export async function verifyBundle(bundleJson: unknown, digest: string, policy: ReleasePolicy): Promise<Outcome> {
  const { checkBundle } = await import("./signature.ts");
  return checkBundle(bundleJson, digest, policy);
}

/**
 * Verify a published release fully offline under a policy: resolve the tag, read the
 * description (every read checked against its digest), find its Sigstore bundles as
 * referrers, verify them against the policy's keys or identities, then read every artifact
 * the description pins, every byte (its manifests, and each config and layer as it streams),
 * and check it hashes to its digest (checkArtifactContent).
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
  const { checkBundle } = await import("./signature.ts");
  const outcomes = bundles.map((b) =>
    b.json === undefined
      ? ({ ok: false, kind: "invalid", reason: "the referrer holds no readable bundle" } as Outcome)
      : checkBundle(b.json, release.digest, policy),
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
  let report: ContentReport;
  try {
    const pinned = artifacts.map((artifact) => parseReference(`${artifact.repository}@${artifact.digest}`));
    // One token request for each registry's repositories (in batches), not one per repository.
    const byRegistry = new Map<string, string[]>();
    for (const ref of pinned) byRegistry.set(ref.registry, [...(byRegistry.get(ref.registry) ?? []), ref.repository]);
    await Promise.all([...byRegistry].map(([registry, repositories]) => client.authorizePull(registry, repositories)));
    // Every byte of every artifact hashed, as it streams: a changed blob is found here, not by helm midway.
    report = await checkArtifactContent(client, artifacts, {
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    });
  } catch (error) {
    restate(error, what);
  }
  assertContent(report, artifacts, release);
  return {
    ...release,
    signer: good.signer,
    artifactsChecked: artifacts.length,
    blobsChecked: report.blobs,
    bytesChecked: report.bytes,
  };
}
