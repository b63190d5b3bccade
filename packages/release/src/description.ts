import { parseYamlWith, type Validated } from "@nodekit/documents";
import { isDigest } from "@nodekit/oci";
import * as z from "zod";

export const RELEASE_API_VERSION = "release.nvke.nodekit.dev/v1";

const digest = z.string().refine(isDigest, { message: "must be a sha256:<64 hex> or sha512:<128 hex> digest" });
// registry/repository, without tag or digest (the digest field pins it).
const repository = z.string().regex(/^(?:oci:\/\/)?[^/@\s]+\/[a-z0-9]+(?:[._/-][a-z0-9]+)*$/, {
  message: "must be registry/repository with no tag or digest (the digest field pins it)",
});
// registry/repository[:tag]: the tag is kept for people; the digest decides.
const imageReference = z
  .string()
  .regex(/^[^/@\s]+\/[a-z0-9]+(?:[._/-][a-z0-9]+)*(?::[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127})?$/, {
    message: "must be registry/repository[:tag] with no digest (the digest field pins it)",
  });
const pinned = z.strictObject({ reference: repository, digest });

const chartSchema = z.strictObject({
  name: z.string().min(1),
  version: z.string().min(1),
  /** `oci://registry/repository` as `helm pull` takes it. */
  reference: repository,
  digest,
});

const imageSchema = z.strictObject({
  reference: imageReference,
  digest,
});

const providerSchema = z.strictObject({
  /** clusterctl's provider name: `cluster-api`, `kubeadm`, `nico`. */
  name: z.string().min(1),
  type: z.enum([
    "CoreProvider",
    "BootstrapProvider",
    "ControlPlaneProvider",
    "InfrastructureProvider",
    "IPAMProvider",
    "RuntimeExtensionProvider",
    "AddonProvider",
  ]),
  version: z
    .string()
    .regex(/^v\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/, { message: "must be a clusterctl version like v1.11.7" }),
  /** The OCI artifact that holds the provider's components YAML (and metadata.yaml). */
  components: pinned,
});

const nvkectlSchema = z.strictObject({
  platform: z
    .string()
    .regex(/^(linux|darwin|windows)\/(amd64|arm64)$/, { message: "must be os/arch, e.g. linux/amd64" }),
  reference: repository,
  digest,
});

export const releaseDescriptionSchema = z.strictObject({
  apiVersion: z.literal(RELEASE_API_VERSION),
  kind: z.literal("ReleaseDescription"),
  metadata: z.strictObject({
    name: z.string().min(1),
    version: z.string().min(1),
    created: z.iso.datetime({ offset: true }).optional(),
  }),
  charts: z.array(chartSchema),
  images: z.array(imageSchema),
  providers: z.array(providerSchema),
  profiles: pinned,
  nvkectl: z.array(nvkectlSchema).min(1),
});

export type ReleaseDescription = z.output<typeof releaseDescriptionSchema>;

/** Parse a release description (YAML or JSON). Never throws: every problem has its line and field path. */
export function parseReleaseDescription(text: string, options: { source: string }): Validated<ReleaseDescription> {
  return parseYamlWith(releaseDescriptionSchema, text, { source: options.source, fileKind: "a release description" });
}

/** One artifact a release pins by digest, and where in the description it is listed. */
export interface ListedArtifact {
  /** `charts[0]`, `images[3]`, `providers[1].components`, `profiles`, `nvkectl[0]`. */
  readonly field: string;
  /** `registry/repository` (no `oci://`). */
  readonly repository: string;
  readonly digest: string;
}

const bare = (reference: string) => reference.replace(/^oci:\/\//, "").replace(/:[^/:]+$/, "");

/** Every artifact the description pins, in description order. */
export function listedArtifacts(description: ReleaseDescription): ListedArtifact[] {
  return [
    ...description.charts.map((c, i) => ({ field: `charts[${i}]`, repository: bare(c.reference), digest: c.digest })),
    ...description.images.map((c, i) => ({ field: `images[${i}]`, repository: bare(c.reference), digest: c.digest })),
    ...description.providers.map((p, i) => ({
      field: `providers[${i}].components`,
      repository: bare(p.components.reference),
      digest: p.components.digest,
    })),
    { field: "profiles", repository: bare(description.profiles.reference), digest: description.profiles.digest },
    ...description.nvkectl.map((n, i) => ({ field: `nvkectl[${i}]`, repository: bare(n.reference), digest: n.digest })),
  ];
}

/** The description as the bytes that are published (stable JSON, two-space indent, trailing newline). */
export function serializeReleaseDescription(description: ReleaseDescription): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(description, null, 2)}\n`);
}
