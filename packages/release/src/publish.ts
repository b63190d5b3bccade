import { UserError } from "@nodekit/errors";
import {
  type Descriptor,
  EMPTY_DESCRIPTOR,
  EMPTY_JSON,
  formatReference,
  MediaType,
  type OciClient,
  parseReference,
  type Reference,
} from "@nodekit/oci";
import type { Signer, Witness } from "@sigstore/sign";
import { type ReleaseDescription, serializeReleaseDescription } from "./description.ts";
import { errorCodes } from "./errors.ts";
import {
  COSIGN_SIGN_PREDICATE_TYPE,
  IN_TOTO_PAYLOAD_TYPE,
  IN_TOTO_STATEMENT_TYPE,
  RELEASE_ARTIFACT_TYPE,
  RELEASE_DESCRIPTION_MEDIA_TYPE,
  SIGSTORE_BUNDLE_ARTIFACT_TYPE,
} from "./media-types.ts";

export interface PushReleaseOptions {
  client: OciClient;
  /** `registry/repository:tag`: where the description goes. */
  reference: string;
  description: ReleaseDescription;
  /** The manifest's created annotation; default now. */
  created?: Date;
}

export interface PublishedRelease {
  /** `registry/repository@sha256:…` of the description's manifest: what is signed. */
  readonly reference: string;
  readonly digest: string;
  readonly manifest: Descriptor;
}

/** Push a release description as an OCI artifact (empty config, one JSON layer) under a tag. */
export async function pushReleaseDescription(options: PushReleaseOptions): Promise<PublishedRelease> {
  const ref = parseReference(options.reference);
  if (ref.tag === undefined || ref.digest !== undefined) {
    throw new UserError(
      errorCodes.RELEASE_INVALID,
      `${options.reference} must name a tag and no digest: a release is pushed under its tag`,
      { next: "Give registry/repository:tag." },
    );
  }
  const client = options.client;
  const bytes = serializeReleaseDescription(options.description);
  await client.pushBlob(ref, EMPTY_JSON, MediaType.Empty);
  const layer = await client.pushBlob(ref, bytes, RELEASE_DESCRIPTION_MEDIA_TYPE);
  const created = (options.created ?? new Date()).toISOString().replace(/\.\d+Z$/, "Z");
  const pushed = await client.putManifest(
    ref,
    {
      schemaVersion: 2,
      mediaType: MediaType.ImageManifest,
      artifactType: RELEASE_ARTIFACT_TYPE,
      config: EMPTY_DESCRIPTOR,
      layers: [{ ...layer, annotations: { "org.opencontainers.image.title": "release.json" } }],
      annotations: {
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.title": options.description.metadata.name,
        "org.opencontainers.image.version": options.description.metadata.version,
      },
    },
    { tag: ref.tag },
  );
  const pinned: Reference = { registry: ref.registry, repository: ref.repository, digest: pushed.descriptor.digest };
  return { reference: formatReference(pinned), digest: pushed.descriptor.digest, manifest: pushed.descriptor };
}

export interface SignOptions {
  client: OciClient;
  /** The artifact to sign, by digest: `registry/repository@sha256:…`. */
  reference: string;
  signer: Signer;
  /**
   * What testifies to the signature in the bundle: a timestamp authority's RFC 3161 timestamp,
   * a transparency-log entry. None by default: a key-signed bundle as `cosign sign --key` writes
   * it with the log and timestamps off.
   */
  witnesses?: Witness[];
  created?: Date;
}

export interface AttachedSignature {
  readonly bundle: unknown;
  readonly referrer: Descriptor;
  readonly via: "api" | "tag";
}

/**
 * Sign an artifact as cosign does with its new bundle format: a DSSE envelope holding an
 * in-toto statement whose subject is the manifest digest, in a Sigstore bundle (v0.3) that
 * is attached to the artifact as a referrer. No transparency log or timestamp is written
 * unless `witnesses` add them.
 */
export async function signArtifact(options: SignOptions): Promise<AttachedSignature> {
  const ref = parseReference(options.reference);
  if (ref.digest === undefined) throw new Error(`signArtifact needs a digest reference, got ${options.reference}`);
  const client = options.client;
  const statement = {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: [
      {
        name: `${ref.registry}/${ref.repository}`,
        digest: { [ref.digest.split(":")[0] ?? "sha256"]: ref.digest.split(":")[1] },
      },
    ],
    predicateType: COSIGN_SIGN_PREDICATE_TYPE,
    predicate: {},
  };
  // Loaded on use: @sigstore/sign (its HTTP stack for Fulcio and Rekor) costs seconds to import,
  // and verify, export and install never sign.
  const [{ DSSEBundleBuilder }, { bundleToJSON }] = await Promise.all([
    import("@sigstore/sign"),
    import("@sigstore/bundle"),
  ]);
  const builder = new DSSEBundleBuilder({ signer: options.signer, witnesses: options.witnesses ?? [] });
  const bundle = await builder.create({ data: Buffer.from(JSON.stringify(statement)), type: IN_TOTO_PAYLOAD_TYPE });
  // No keyid in the DSSE signature, as cosign writes it: cosign (go-securesystemslib) skips a
  // signature whose keyid differs from its own ID for the key, and the key hint already names
  // the key in the verification material. The keyid is not signed, so nothing else changes.
  if (bundle.content.$case === "dsseEnvelope") {
    for (const signature of bundle.content.dsseEnvelope.signatures) signature.keyid = "";
  }
  const json = bundleToJSON(bundle);
  const attached = await attachBundle(client, options.reference, json, options.created);
  return { bundle: json, ...attached };
}

/**
 * Attach a Sigstore bundle (its JSON) to the artifact `reference` names (by digest) as a
 * referrer, with the annotations cosign writes. The empty config blob must be in the repository.
 */
export async function attachBundle(
  client: OciClient,
  reference: string,
  bundleJson: unknown,
  created = new Date(),
): Promise<Omit<AttachedSignature, "bundle">> {
  const ref = parseReference(reference);
  const subject = await client.resolve(ref);
  const layer = await client.pushBlob(
    ref,
    new TextEncoder().encode(JSON.stringify(bundleJson)),
    SIGSTORE_BUNDLE_ARTIFACT_TYPE,
  );
  const attached = await client.attachReferrer(ref, {
    schemaVersion: 2,
    mediaType: MediaType.ImageManifest,
    artifactType: SIGSTORE_BUNDLE_ARTIFACT_TYPE,
    config: EMPTY_DESCRIPTOR,
    layers: [layer],
    subject: { mediaType: subject.mediaType, digest: subject.digest, size: subject.size },
    annotations: {
      "dev.sigstore.bundle.content": "dsse-envelope",
      "dev.sigstore.bundle.predicateType": COSIGN_SIGN_PREDICATE_TYPE,
      "org.opencontainers.image.created": created.toISOString().replace(/\.\d+Z$/, "Z"),
    },
  });
  return { referrer: attached.descriptor, via: attached.via };
}

/** Push the description and sign it: what a release publisher does. */
export async function publishRelease(
  options: PushReleaseOptions & Pick<SignOptions, "signer" | "witnesses">,
): Promise<PublishedRelease & { signature: AttachedSignature }> {
  const published = await pushReleaseDescription(options);
  const signature = await signArtifact({
    client: options.client,
    reference: published.reference,
    signer: options.signer,
    ...(options.witnesses === undefined ? {} : { witnesses: options.witnesses }),
    ...(options.created === undefined ? {} : { created: options.created }),
  });
  return { ...published, signature };
}
