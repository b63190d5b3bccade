/**
 * Publishes a signed NVKE release into a registry, for tests, the sandbox and (later) the
 * `release` commands' demos: local charts (`helm package`, pushed with helm's OCI media
 * types so `helm pull oci://…@sha256:` works), small OCI images, clusterctl provider
 * components, the profile content image and nvkectl per platform; then the description,
 * signed with the given key and attached as a referrer.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Descriptor, digestOf, EMPTY_DESCRIPTOR, EMPTY_JSON, MediaType, type OciClient } from "@nodekit/oci";
import {
  type AttachedSignature,
  componentsFileName,
  type PublishedRelease,
  publishRelease,
  pushReleaseDescription,
  RELEASE_API_VERSION,
  type ReleaseDescription,
} from "@nodekit/release";
import type { Signer, Witness } from "@sigstore/sign";
import { execa } from "execa";
import { load } from "js-yaml";

export interface PublishTestReleaseOptions {
  client: OciClient;
  /** `host:port` of the registry. */
  registry: string;
  /** Repository prefix; default `nvke`. */
  prefix?: string;
  name?: string;
  version?: string;
  /** Chart directories to `helm package` and push. */
  charts?: string[];
  /** The helm binary and the environment to run it in (its own HOME). */
  helm?: { bin: string; env: Record<string, string> };
  /** Names of small images to build and push (`controller`, `agent`, …). */
  images?: string[];
  /**
   * Give each image a second layer of this many random bytes (an uncompressed layer whose
   * bytes are not a tar: for benchmarks of reading content, never unpacked). Default none.
   */
  imageBytes?: number;
  providers?: Array<{
    name: string;
    type: ReleaseDescription["providers"][number]["type"];
    version: string;
    components: string;
    /** clusterctl's metadata.yaml for the provider, pushed beside the components when given. */
    metadata?: string;
  }>;
  /** nvkectl's platforms; default linux/amd64 and linux/arm64 (each a small stand-in file). */
  platforms?: string[];
  /**
   * nvkectl's real executables (`pnpm package`'s files), pushed as its artifacts in place of
   * the stand-ins (`platforms` is then ignored): each one layer titled with its file name.
   */
  executables?: Array<{ platform: string; file: string }>;
  signer: Signer;
  /** Witnesses for the signature (a timestamp authority); none by default. */
  witnesses?: Witness[];
  /** Pushed but not signed when false (for the unsigned case). Default true. */
  sign?: boolean;
}

export interface PublishedTestRelease extends PublishedRelease {
  /** `registry/prefix/release:version`. */
  readonly tagReference: string;
  readonly description: ReleaseDescription;
  /** Absent when published with `sign: false`. */
  readonly signature?: AttachedSignature;
}

async function pushArtifact(
  client: OciClient,
  repository: string,
  tag: string,
  artifactType: string,
  content: Uint8Array,
  layerMediaType: string,
  title?: string,
): Promise<Descriptor> {
  await client.pushBlob(repository, EMPTY_JSON, MediaType.Empty);
  const pushedLayer = await client.pushBlob(repository, content, layerMediaType);
  const layer =
    title === undefined ? pushedLayer : { ...pushedLayer, annotations: { "org.opencontainers.image.title": title } };
  const pushed = await client.putManifest(
    repository,
    { schemaVersion: 2, mediaType: MediaType.ImageManifest, artifactType, config: EMPTY_DESCRIPTOR, layers: [layer] },
    { tag },
  );
  return pushed.descriptor;
}

/** A small but real OCI image: one gzipped layer holding an empty tar archive plus a marker (and `extraBytes` random bytes as a second layer). */
async function pushImage(client: OciClient, repository: string, tag: string, extraBytes = 0): Promise<Descriptor> {
  const tar = Buffer.alloc(1024); // two zero blocks: an empty tar archive
  const marker = Buffer.from(`${repository}:${tag}\n`);
  const uncompressed = Buffer.concat([tar, marker]);
  const layer = await client.pushBlob(repository, gzipSync(uncompressed), MediaType.ImageLayer);
  const extra = extraBytes > 0 ? randomBytes(extraBytes) : undefined;
  const extraLayer =
    extra === undefined
      ? undefined
      : await client.pushBlob(repository, extra, "application/vnd.oci.image.layer.v1.tar");
  const config = new TextEncoder().encode(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Labels: { "org.opencontainers.image.source": repository } },
      rootfs: {
        type: "layers",
        diff_ids: [digestOf(uncompressed), ...(extra === undefined ? [] : [digestOf(extra)])],
      },
    }),
  );
  const configDescriptor = await client.pushBlob(repository, config, MediaType.ImageConfig);
  const pushed = await client.putManifest(
    repository,
    {
      schemaVersion: 2,
      mediaType: MediaType.ImageManifest,
      config: configDescriptor,
      layers: extraLayer === undefined ? [layer] : [layer, extraLayer],
    },
    { tag },
  );
  return pushed.descriptor;
}

/** `helm package` the chart, then push it as helm does: Chart.yaml as the JSON config, the .tgz as the one layer. */
async function pushChart(
  client: OciClient,
  registry: string,
  prefix: string,
  chartDir: string,
  helm: NonNullable<PublishTestReleaseOptions["helm"]>,
): Promise<ReleaseDescription["charts"][number]> {
  const out = await mkdtemp(join(tmpdir(), "nodekit-chart-"));
  try {
    await execa(helm.bin, ["package", chartDir, "--destination", out], { env: helm.env, extendEnv: false });
    const [file] = (await readdir(out)).filter((f) => f.endsWith(".tgz"));
    if (file === undefined) throw new Error(`helm package wrote no .tgz for ${chartDir}`);
    const tgz = await readFile(join(out, file));
    const chartYaml = load(await readFile(join(chartDir, "Chart.yaml"), "utf8")) as { name: string; version: string };
    const repository = `${registry}/${prefix}/charts/${chartYaml.name}`;
    await client.pushBlob(repository, new Uint8Array(tgz), MediaType.HelmChart);
    const config = await client.pushBlob(
      repository,
      new TextEncoder().encode(JSON.stringify(chartYaml)),
      MediaType.HelmConfig,
    );
    const layer: Descriptor = { mediaType: MediaType.HelmChart, digest: digestOf(tgz), size: tgz.length };
    const pushed = await client.putManifest(
      repository,
      {
        schemaVersion: 2,
        mediaType: MediaType.ImageManifest,
        config,
        layers: [layer],
        annotations: {
          "org.opencontainers.image.title": chartYaml.name,
          "org.opencontainers.image.version": chartYaml.version,
        },
      },
      { tag: chartYaml.version },
    );
    return {
      name: chartYaml.name,
      version: chartYaml.version,
      reference: `oci://${repository}`,
      digest: pushed.descriptor.digest,
    };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** Build every artifact, then the description; push it and (unless `sign: false`) sign it. */
export async function publishTestRelease(options: PublishTestReleaseOptions): Promise<PublishedTestRelease> {
  const { client, registry } = options;
  const prefix = options.prefix ?? "nvke";
  const version = options.version ?? "1.0.0";
  const charts: ReleaseDescription["charts"] = [];
  for (const dir of options.charts ?? []) {
    if (options.helm === undefined) throw new Error("charts need options.helm");
    charts.push(await pushChart(client, registry, prefix, dir, options.helm));
  }
  const images = await Promise.all(
    (options.images ?? ["controller"]).map(async (name) => {
      const repository = `${registry}/${prefix}/images/${name}`;
      const pushed = await pushImage(client, repository, version, options.imageBytes);
      return { reference: `${repository}:${version}`, digest: pushed.digest };
    }),
  );
  const providers = await Promise.all(
    (
      options.providers ?? [
        { name: "cluster-api", type: "CoreProvider" as const, version: "v1.11.7", components: "# core components\n" },
      ]
    ).map(async (p) => {
      const repository = `${registry}/${prefix}/providers/${p.type === "CoreProvider" ? "" : `${p.type.replace(/Provider$/, "").toLowerCase()}-`}${p.name}`;
      // One layer per file, named as clusterctl's provider repository names them.
      const files: Array<[string, string]> = [
        [componentsFileName(p.type), p.components],
        ...(p.metadata === undefined ? [] : [["metadata.yaml", p.metadata] as [string, string]]),
      ];
      await client.pushBlob(repository, EMPTY_JSON, MediaType.Empty);
      const layers = await Promise.all(
        files.map(async ([title, text]) => ({
          ...(await client.pushBlob(
            repository,
            new TextEncoder().encode(text),
            "application/vnd.nodekit.clusterctl.components.v1+yaml",
          )),
          annotations: { "org.opencontainers.image.title": title },
        })),
      );
      const { descriptor: pushed } = await client.putManifest(
        repository,
        {
          schemaVersion: 2,
          mediaType: MediaType.ImageManifest,
          artifactType: "application/vnd.nodekit.clusterctl.components.v1",
          config: EMPTY_DESCRIPTOR,
          layers,
        },
        { tag: p.version },
      );
      return {
        name: p.name,
        type: p.type,
        version: p.version,
        components: { reference: repository, digest: pushed.digest },
      };
    }),
  );
  const profilesRepository = `${registry}/${prefix}/profiles`;
  const profiles = await pushImage(client, profilesRepository, version);
  const nvkectlRepository = `${registry}/${prefix}/nvkectl`;
  const executables: Array<{ platform: string; reference: string; digest: string }> = [];
  // One at a time: each is read whole into memory to be pushed (a hundred megabytes or so).
  for (const { platform, file } of options.executables ?? []) {
    const pushed = await pushArtifact(
      client,
      nvkectlRepository,
      `${version}-${platform.replace("/", "-")}`,
      "application/vnd.nodekit.nvkectl.v1",
      await readFile(file),
      "application/vnd.nodekit.nvkectl.binary.v1",
      basename(file),
    );
    executables.push({ platform, reference: nvkectlRepository, digest: pushed.digest });
  }
  const nvkectl =
    options.executables !== undefined
      ? executables
      : await Promise.all(
          (options.platforms ?? ["linux/amd64", "linux/arm64"]).map(async (platform) => {
            const repository = `${registry}/${prefix}/nvkectl`;
            const pushed = await pushArtifact(
              client,
              repository,
              `${version}-${platform.replace("/", "-")}`,
              "application/vnd.nodekit.nvkectl.v1",
              new TextEncoder().encode(`nvkectl ${version} for ${platform}\n`),
              "application/vnd.nodekit.nvkectl.binary.v1",
            );
            return { platform, reference: repository, digest: pushed.digest };
          }),
        );
  const description: ReleaseDescription = {
    apiVersion: RELEASE_API_VERSION,
    kind: "ReleaseDescription",
    metadata: { name: options.name ?? "nvke", version },
    charts,
    images,
    providers,
    profiles: { reference: profilesRepository, digest: profiles.digest },
    nvkectl,
  };
  const tagReference = `${registry}/${prefix}/release:${version}`;
  if (options.sign === false) {
    return {
      tagReference,
      description,
      ...(await pushReleaseDescription({ client, reference: tagReference, description })),
    };
  }
  const published = await publishRelease({
    client,
    reference: tagReference,
    description,
    signer: options.signer,
    ...(options.witnesses === undefined ? {} : { witnesses: options.witnesses }),
  });
  return { tagReference, description, ...published };
}
