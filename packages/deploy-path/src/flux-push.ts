import { createHash, createPrivateKey, createPublicKey, sign } from "node:crypto";
import type { FluxArtifact, OciBlob } from "./flux-artifact.ts";

/**
 * Pushing the tree's artifacts to a registry by digest, each with a cosign signature made
 * with a local key: the form Flux's source-controller verifies against a public key
 * (`OCIRepository.spec.verify.provider: cosign` with `secretRef`). Given a key, its verifier
 * (source-controller v1.9's internal/oci/cosign) works offline and ignores the transparency
 * log, looks for a Sigstore bundle first (referrers) and otherwise takes cosign's classic
 * signature: an image manifest tagged `sha256-<hex>.sig` in the artifact's repository whose
 * layers are simple-signing payloads (`application/vnd.dev.cosign.simplesigning.v1+json`),
 * each annotated `dev.cosignproject.cosign/signature` with the base64 ECDSA signature of its
 * bytes. That classic form is written here (what `cosign sign --key --tlog-upload=false`
 * writes), with node:crypto.
 */

export const COSIGN_SIMPLE_SIGNING_MEDIA_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json";
export const COSIGN_SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";

/** The registry calls a push needs (`OciClient` of @nodekit/oci has them). */
export interface ArtifactPusher {
  pushBlob(repository: string, bytes: Uint8Array, mediaType?: string): Promise<unknown>;
  putManifest(
    repository: string,
    manifest: Uint8Array,
    options?: { mediaType?: string; tag?: string },
  ): Promise<unknown>;
}

/** A cosign signature of one artifact: its manifest (to push under `tag`) and the config and payload blobs. */
export interface CosignSignature {
  tag: string;
  manifest: OciBlob;
  blobs: readonly OciBlob[];
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const blob = (mediaType: string, bytes: Uint8Array): OciBlob => ({ digest: sha256(bytes), mediaType, bytes });
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** cosign's tag for the signatures of `digest`: `sha256-<hex>.sig`. */
export const cosignSignatureTag = (digest: string) => `${digest.replace(":", "-")}.sig`;

/**
 * cosign's classic signature of the manifest `digest` in `repository` (`host/path`, no tag),
 * signed with `privateKeyPem` (ECDSA P-256, as `cosign generate-key-pair` makes: PKCS#8, unencrypted).
 */
export function cosignSignature(repository: string, digest: string, privateKeyPem: string): CosignSignature {
  const payload = blob(
    COSIGN_SIMPLE_SIGNING_MEDIA_TYPE,
    json({
      critical: {
        identity: { "docker-reference": repository },
        image: { "docker-manifest-digest": digest },
        type: "cosign container image signature",
      },
      optional: null,
    }),
  );
  const signature = sign("sha256", payload.bytes, createPrivateKey(privateKeyPem)).toString("base64");
  const config = blob(
    OCI_CONFIG,
    json({
      architecture: "",
      created: "0001-01-01T00:00:00Z",
      history: [{ created: "0001-01-01T00:00:00Z" }],
      os: "",
      rootfs: { type: "layers", diff_ids: [payload.digest] },
      config: {},
    }),
  );
  const manifest = blob(
    OCI_MANIFEST,
    json({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: config.mediaType, size: config.bytes.length, digest: config.digest },
      layers: [
        {
          mediaType: payload.mediaType,
          size: payload.bytes.length,
          digest: payload.digest,
          annotations: { [COSIGN_SIGNATURE_ANNOTATION]: signature },
        },
      ],
    }),
  );
  return { tag: cosignSignatureTag(digest), manifest, blobs: [config, payload] };
}

/** The public key (SPKI PEM, what Flux's verify Secret holds as `cosign.pub`) of a private key. */
export function publicKeyOf(privateKeyPem: string): string {
  return createPublicKey(createPrivateKey(privateKeyPem)).export({ type: "spki", format: "pem" }).toString();
}

export interface PushFluxArtifactsOptions {
  /** `oci://host/path` or `host/path`: item `x` goes to `host/path/x`, as the tree's OCIRepositories name it. */
  repository: string;
  artifacts: readonly FluxArtifact[];
  /** Signs each artifact (cosign's classic signature) with this key; absent: unsigned. */
  signingKeyPem?: string;
}

export interface PushedFluxArtifact {
  item: string;
  /** `host/path/item@sha256:…`. */
  reference: string;
  /** `host/path/item:sha256-….sig` when signed. */
  signature?: string;
}

/**
 * Pushes each artifact by digest (blobs, then the manifest under its own digest: no tag moves)
 * to its item's repository, and its signature when a key is given. Nothing is pushed under a
 * tag but the signature's, which cosign names after the digest.
 */
export async function pushFluxArtifacts(
  client: ArtifactPusher,
  options: PushFluxArtifactsOptions,
): Promise<PushedFluxArtifact[]> {
  const base = options.repository.replace(/^oci:\/\//, "").replace(/\/+$/, "");
  const pushed: PushedFluxArtifact[] = [];
  for (const artifact of options.artifacts) {
    const repository = `${base}/${artifact.item}`;
    for (const b of artifact.blobs) await client.pushBlob(repository, b.bytes, b.mediaType);
    await client.putManifest(repository, artifact.manifest.bytes, { mediaType: artifact.manifest.mediaType });
    const reference = `${repository}@${artifact.digest}`;
    if (options.signingKeyPem === undefined) {
      pushed.push({ item: artifact.item, reference });
      continue;
    }
    const signature = cosignSignature(repository, artifact.digest, options.signingKeyPem);
    for (const b of signature.blobs) await client.pushBlob(repository, b.bytes, b.mediaType);
    await client.putManifest(repository, signature.manifest.bytes, {
      mediaType: signature.manifest.mediaType,
      tag: signature.tag,
    });
    pushed.push({ item: artifact.item, reference, signature: `${repository}:${signature.tag}` });
  }
  return pushed;
}
