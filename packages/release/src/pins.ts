import type { OciClient } from "@nodekit/oci";
import { parseReference } from "@nodekit/oci";
import type { ReleaseDescription } from "./description.ts";

/** `registry/repository` of an image reference, without tag or digest. */
export function imageRepository(reference: string): string {
  const ref = parseReference(reference);
  return `${ref.registry}/${ref.repository}`;
}

const lastSegment = (repository: string) => repository.slice(repository.lastIndexOf("/") + 1);

export type ImageMatch =
  | { found: true; image: ReleaseDescription["images"][number]; pinned: string }
  | { found: false; reason: "not-in-release" | "ambiguous" | "not-a-reference" };

/**
 * The release's image for an image reference found in values: the one with the same
 * repository, else the only one with the same image name (the repository's last path
 * segment; the release may be published to another registry than the values name).
 * `pinned` is `registry/repository@sha256:…`, the release's repository at its digest.
 */
export function releaseImageFor(reference: string, description: ReleaseDescription): ImageMatch {
  let repository: string;
  try {
    repository = imageRepository(reference);
  } catch {
    return { found: false, reason: "not-a-reference" };
  }
  const pin = (image: ReleaseDescription["images"][number]): ImageMatch => ({
    found: true,
    image,
    pinned: `${imageRepository(image.reference)}@${image.digest}`,
  });
  const exact = description.images.find((image) => imageRepository(image.reference) === repository);
  if (exact !== undefined) return pin(exact);
  const named = description.images.filter(
    (image) => lastSegment(imageRepository(image.reference)) === lastSegment(repository),
  );
  if (named.length === 1 && named[0] !== undefined) return pin(named[0]);
  return { found: false, reason: named.length > 1 ? "ambiguous" : "not-in-release" };
}

/** `registry/repository@sha256:…` of the release's profile content image. */
export function pinnedProfiles(description: ReleaseDescription): string {
  return `${description.profiles.reference.replace(/^oci:\/\//, "")}@${description.profiles.digest}`;
}

/**
 * The files of a clusterctl provider's components artifact (as the publisher pushes it: one
 * layer per file, named by its `org.opencontainers.image.title` annotation), every read
 * checked against its digest; the layers read at once. `only` names the files wanted (say
 * `metadata.yaml` alone, without the components, which can be megabytes): the others are
 * not read.
 */
export async function fetchProviderFiles(
  client: OciClient,
  components: ReleaseDescription["providers"][number]["components"],
  options: { only?: readonly string[] } = {},
): Promise<Map<string, Uint8Array>> {
  const base = parseReference(components.reference);
  const ref = { registry: base.registry, repository: base.repository, digest: components.digest };
  const { manifest } = await client.getManifest(ref);
  const layers = (manifest.layers ?? []) as Array<{ digest?: string; annotations?: Record<string, string> }>;
  const wanted = layers.flatMap((layer) => {
    const title = layer.annotations?.["org.opencontainers.image.title"];
    if (title === undefined || layer.digest === undefined || title.includes("/") || title.startsWith(".")) return [];
    if (options.only !== undefined && !options.only.includes(title)) return [];
    return [{ title, digest: layer.digest }];
  });
  const read = await Promise.all(
    wanted.map(
      async ({ title, digest }) =>
        [title, await client.getBlob(ref, digest, { maxBytes: 64 * 1024 * 1024 })] as [string, Uint8Array],
    ),
  );
  return new Map(read);
}

const COMPONENTS_FILES: Record<ReleaseDescription["providers"][number]["type"], string> = {
  CoreProvider: "core-components.yaml",
  BootstrapProvider: "bootstrap-components.yaml",
  ControlPlaneProvider: "control-plane-components.yaml",
  InfrastructureProvider: "infrastructure-components.yaml",
  IPAMProvider: "ipam-components.yaml",
  RuntimeExtensionProvider: "runtime-extension-components.yaml",
  AddonProvider: "addon-components.yaml",
};

/** The file name clusterctl reads a provider's components from, by provider type. */
export function componentsFileName(type: ReleaseDescription["providers"][number]["type"]): string {
  return COMPONENTS_FILES[type];
}
