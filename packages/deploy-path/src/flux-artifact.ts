import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { FLUX_CONFIG_MEDIA_TYPE, FLUX_CONTENT_MEDIA_TYPE } from "./flux.ts";

/** One blob of an OCI image layout: its digest, media type and bytes. */
export interface OciBlob {
  digest: string;
  mediaType: string;
  bytes: Uint8Array;
}

/** An item's artifact in Flux's format (or Argo CD's: other media types): a manifest (config `{}`, one tar+gzip layer) and its blobs. */
export interface FluxArtifact {
  item: string;
  /** The manifest's digest: what the OCIRepository pins. */
  digest: string;
  manifest: OciBlob;
  blobs: readonly OciBlob[];
}

/**
 * The config and layer media types of an artifact. Flux's (the default) are what `flux push
 * artifact` writes; Argo CD's repo-server refuses that layer type unless configured, and takes
 * the OCI image layer type (ARGOCD_ARTIFACT_MEDIA_TYPES), with the same bytes.
 */
export interface ArtifactMediaTypes {
  config: string;
  layer: string;
}

const FLUX_ARTIFACT_MEDIA_TYPES: ArtifactMediaTypes = {
  config: FLUX_CONFIG_MEDIA_TYPE,
  layer: FLUX_CONTENT_MEDIA_TYPE,
};

export interface PackFluxArtifactOptions {
  item: string;
  /** The files of the artifact, by path inside it. */
  files: Readonly<Record<string, string>>;
  /** `org.opencontainers.image.source` and `.revision`, as `flux push artifact --source/--revision` set them. */
  source: string;
  revision: string;
  /** `org.opencontainers.image.created`; fixed (the release's time, not the clock) so that a re-emit gives the same digest. */
  created: string;
  /** Where the files are staged for tar; default the system's temporary directory. */
  tmpDir?: string;
  /** Default Flux's (FLUX_ARTIFACT_MEDIA_TYPES). */
  mediaTypes?: ArtifactMediaTypes;
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const blob = (mediaType: string, bytes: Uint8Array): OciBlob => ({ digest: sha256(bytes), mediaType, bytes });

/**
 * Packs files as Flux's OCI artifact (what `flux push artifact` pushes): a tar+gzip layer of
 * the files, every entry with mode 0644, mtime 0 and no owner, so the same files always give
 * the same digest.
 */
export async function packFluxArtifact(options: PackFluxArtifactOptions): Promise<FluxArtifact> {
  const { create } = await import("tar");
  const stage = await mkdtemp(join(options.tmpDir ?? tmpdir(), "nvke-flux-"));
  try {
    const names = Object.keys(options.files).sort();
    for (const name of names) {
      const path = join(stage, name);
      await mkdir(join(path, ".."), { recursive: true });
      await writeFile(path, options.files[name] ?? "");
      await chmod(path, 0o644);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of create({ cwd: stage, portable: true, mtime: new Date(0), noDirRecurse: true }, names)) {
      chunks.push(chunk as Buffer);
    }
    const mediaTypes = options.mediaTypes ?? FLUX_ARTIFACT_MEDIA_TYPES;
    const layer = blob(mediaTypes.layer, gzipSync(Buffer.concat(chunks)));
    const config = blob(mediaTypes.config, new TextEncoder().encode("{}"));
    const manifest = {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: { mediaType: config.mediaType, digest: config.digest, size: config.bytes.length },
      layers: [{ mediaType: layer.mediaType, digest: layer.digest, size: layer.bytes.length }],
      annotations: {
        "org.opencontainers.image.created": options.created,
        "org.opencontainers.image.revision": options.revision,
        "org.opencontainers.image.source": options.source,
      },
    };
    const manifestBlob = blob(manifest.mediaType, new TextEncoder().encode(JSON.stringify(manifest)));
    return { item: options.item, digest: manifestBlob.digest, manifest: manifestBlob, blobs: [config, layer] };
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/** The files of an OCI image layout holding the artifacts, each tagged (`ref.name`) with its item. */
export function ociLayoutFiles(artifacts: readonly FluxArtifact[]): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const text = (value: unknown) => new TextEncoder().encode(`${JSON.stringify(value, null, 2)}\n`);
  files.set("oci-layout", text({ imageLayoutVersion: "1.0.0" }));
  files.set(
    "index.json",
    text({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: artifacts.map((a) => ({
        mediaType: a.manifest.mediaType,
        digest: a.digest,
        size: a.manifest.bytes.length,
        annotations: { "org.opencontainers.image.ref.name": a.item },
      })),
    }),
  );
  for (const b of artifacts.flatMap((a) => [a.manifest, ...a.blobs])) {
    files.set(join("blobs", "sha256", b.digest.slice("sha256:".length)), b.bytes);
  }
  return files;
}
