import { dump } from "js-yaml";

/**
 * A deploy path's install as Flux objects (pure): per item an `OCIRepository` pinned by the
 * digest of the item's artifact (its rendered manifests in Flux's artifact format) and a
 * `Kustomization` that applies it, with the item's `dependsOn`, `prune`, `wait`, the item's
 * timeout and, where the install patches objects afterwards, the patch. What is applied is
 * data here; packing the artifacts and writing the tree are flux-artifact.ts's.
 */

/** Flux's artifact format (RFC-0003): the config and content media types `flux push artifact` writes. */
export const FLUX_CONFIG_MEDIA_TYPE = "application/vnd.cncf.flux.config.v1+json";
export const FLUX_CONTENT_MEDIA_TYPE = "application/vnd.cncf.flux.content.v1.tar+gzip";
export const FLUX_SOURCE_API_VERSION = "source.toolkit.fluxcd.io/v1";
export const FLUX_KUSTOMIZE_API_VERSION = "kustomize.toolkit.fluxcd.io/v1";
/** The one file of each item's artifact. */
export const FLUX_MANIFESTS_FILE = "manifests.yaml";

/** A Kubernetes object as rendered (helm template, a manifest file, the installer's own). */
export type RenderedObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
};

/** A patch a Kustomization applies to one of its objects (`spec.patches[]`). */
export interface FluxPatch {
  target: { group?: string; version?: string; kind: string; name: string; namespace?: string };
  /** A strategic merge patch or a JSON 6902 patch, as YAML or JSON text. */
  patch: string;
}

/** One item of the install, rendered. */
export interface FluxItem {
  /** The plan item's id: the Kustomization's and OCIRepository's name after the prefix. */
  name: string;
  title: string;
  /** Items (names of this list) that must be ready first. */
  dependsOn: readonly string[];
  /** The item's timeout: the Kustomization's `timeout` (how long `wait` waits). */
  timeout: string;
  objects: readonly RenderedObject[];
  patches?: readonly FluxPatch[];
}

export interface FluxTreeOptions {
  /** The namespace the Flux objects live in (Flux's own, `flux-system`). */
  namespace: string;
  /** Prefixed to each item's name: `nvke-spire`. */
  prefix: string;
  /** `oci://host/path`: item `x`'s artifact is `${repository}/x`, pinned by digest. */
  repository: string;
  /** How often Flux checks the source and re-applies (Flux's `interval`). */
  interval: string;
  /**
   * How soon a Kustomization whose apply or health check failed tries again (Flux's
   * `retryInterval`; default 1m). Without one, kustomize-controller retries a failure only
   * after `interval` (GetRetryInterval falls back to it): a first install that fails once, on a
   * webhook not serving yet, would stand still for ten minutes.
   */
  retryInterval?: string;
  /** Signature verification of each artifact; absent: none (the docs say when that is acceptable). */
  verify?: { provider: "cosign" | "notation"; secretRef: string } | undefined;
  /** `OCIRepository.spec.insecure`: the registry speaks plain HTTP. */
  insecure?: boolean;
  /** `OCIRepository.spec.secretRef`: a docker-registry Secret in `namespace` with the registry's pull credentials. */
  pullSecret?: string | undefined;
}

/** What Flux pulls for one item: the artifact's manifest digest (see packFluxArtifact). */
export interface FluxArtifactRef {
  item: string;
  digest: string;
}

/** The manifests file of an item's artifact: its objects as YAML documents, in the order rendered. */
export function fluxManifests(item: FluxItem): string {
  return item.objects.map((object) => dump(object, { lineWidth: -1, noRefs: true, sortKeys: false })).join("---\n");
}

const fluxName = (options: Pick<FluxTreeOptions, "prefix">, item: string) => `${options.prefix}${item}`;

/**
 * The `OCIRepository` and the `Kustomization` of each item, in the items' order. Every
 * source is pinned by digest (a tag can move; a digest cannot), and every Kustomization
 * prunes what it no longer renders and waits for what it applies, for the item's timeout.
 */
export function fluxObjects(
  items: readonly FluxItem[],
  artifacts: readonly FluxArtifactRef[],
  options: FluxTreeOptions,
): RenderedObject[] {
  const digests = new Map(artifacts.map((a) => [a.item, a.digest]));
  const names = new Set(items.map((item) => item.name));
  return items.flatMap((item): RenderedObject[] => {
    const digest = digests.get(item.name);
    if (digest === undefined) throw new Error(`no artifact for item ${item.name}`);
    const unknown = item.dependsOn.filter((d) => !names.has(d));
    if (unknown.length > 0) throw new Error(`item ${item.name} depends on ${unknown.join(", ")}, not in the tree`);
    const name = fluxName(options, item.name);
    const labels = { "app.kubernetes.io/managed-by": "nvkectl", "app.kubernetes.io/part-of": "nvke" };
    const source: RenderedObject = {
      apiVersion: FLUX_SOURCE_API_VERSION,
      kind: "OCIRepository",
      metadata: { name, namespace: options.namespace, labels },
      spec: {
        interval: options.interval,
        url: `${options.repository.replace(/\/+$/, "")}/${item.name}`,
        ref: { digest },
        ...(options.insecure === true ? { insecure: true } : {}),
        ...(options.pullSecret === undefined ? {} : { secretRef: { name: options.pullSecret } }),
        ...(options.verify === undefined
          ? {}
          : { verify: { provider: options.verify.provider, secretRef: { name: options.verify.secretRef } } }),
      },
    };
    const kustomization: RenderedObject = {
      apiVersion: FLUX_KUSTOMIZE_API_VERSION,
      kind: "Kustomization",
      metadata: { name, namespace: options.namespace, labels, annotations: { "nvke.nodekit.dev/item": item.title } },
      spec: {
        interval: options.interval,
        retryInterval: options.retryInterval ?? "1m",
        sourceRef: { kind: "OCIRepository", name },
        path: "./",
        prune: true,
        wait: true,
        timeout: item.timeout,
        ...(item.dependsOn.length === 0
          ? {}
          : { dependsOn: item.dependsOn.map((d) => ({ name: fluxName(options, d) })) }),
        ...(item.patches === undefined || item.patches.length === 0 ? {} : { patches: item.patches }),
      },
    };
    return [source, kustomization];
  });
}

/**
 * Kinds no namespace applies to. helm and `kubectl apply --namespace` give an object without
 * one the release's namespace only when its kind is namespaced; so does the tree.
 */
const CLUSTER_SCOPED = new Set([
  "APIService",
  "CertificateSigningRequest",
  "ClusterRole",
  "ClusterRoleBinding",
  "CSIDriver",
  "CSINode",
  "CustomResourceDefinition",
  "IngressClass",
  "MutatingWebhookConfiguration",
  "Namespace",
  "Node",
  "PersistentVolume",
  "PriorityClass",
  "RuntimeClass",
  "StorageClass",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "ValidatingWebhookConfiguration",
  "VolumeAttachment",
]);

/** `group/Kind` of every cluster-scoped custom resource the objects define (their CRDs). */
export function clusterScopedKinds(objects: readonly RenderedObject[]): Set<string> {
  const kinds = new Set<string>();
  for (const object of objects) {
    if (object.kind !== "CustomResourceDefinition") continue;
    const spec = object.spec as { group?: string; scope?: string; names?: { kind?: string } } | undefined;
    if (spec?.scope === "Cluster" && spec.names?.kind !== undefined) kinds.add(`${spec.group}/${spec.names.kind}`);
  }
  return kinds;
}

/**
 * The namespace an object lands in when helm installs it into `namespace` (or `kubectl apply
 * --namespace` applies it): set where the object names none and its kind is namespaced, so
 * that Flux, which applies objects as they are, puts it in the same place.
 */
export function inNamespace(
  object: RenderedObject,
  namespace: string | undefined,
  clusterScoped: ReadonlySet<string>,
): RenderedObject {
  if (namespace === undefined || object.metadata.namespace !== undefined) return object;
  const group = object.apiVersion.includes("/") ? object.apiVersion.split("/")[0] : "";
  if (CLUSTER_SCOPED.has(object.kind) || clusterScoped.has(`${group}/${object.kind}`)) return object;
  return { ...object, metadata: { ...object.metadata, namespace } };
}

/** Every Secret among the objects (`namespace/name`): a tree that is committed or pushed may hold none. */
export function secretsIn(objects: readonly RenderedObject[]): string[] {
  return objects
    .filter((o) => o.apiVersion === "v1" && o.kind === "Secret")
    .map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`);
}
