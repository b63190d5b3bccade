/** Media types of the OCI image and distribution specs (and the Docker ones registries still serve). */
export const MediaType = {
  ImageManifest: "application/vnd.oci.image.manifest.v1+json",
  ImageIndex: "application/vnd.oci.image.index.v1+json",
  /** The OCI 1.1 release candidates' artifact manifest: still read, never written. */
  ArtifactManifest: "application/vnd.oci.artifact.manifest.v1+json",
  DockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  DockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
  /** The empty descriptor's media type: config `{}` for artifacts that have no config. */
  Empty: "application/vnd.oci.empty.v1+json",
  ImageConfig: "application/vnd.oci.image.config.v1+json",
  ImageLayer: "application/vnd.oci.image.layer.v1.tar+gzip",
  /** helm's OCI chart media types (helm pull oci://… reads exactly these). */
  HelmConfig: "application/vnd.cncf.helm.config.v1+json",
  HelmChart: "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
} as const;

/** Every manifest media type the client reads: sent as Accept on manifest requests. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = [
  MediaType.ImageManifest,
  MediaType.ImageIndex,
  MediaType.ArtifactManifest,
  MediaType.DockerManifest,
  MediaType.DockerManifestList,
];

/** The empty JSON object `{}` and its descriptor, as the image spec defines them. */
export const EMPTY_JSON = new TextEncoder().encode("{}");
export const EMPTY_DESCRIPTOR = {
  mediaType: MediaType.Empty,
  digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
  size: 2,
} as const;
