import { dump } from "js-yaml";
import {
  FLUX_MANIFESTS_FILE,
  type FluxArtifactRef,
  type FluxItem,
  fluxManifests,
  type RenderedObject,
} from "./flux.ts";
import type { ArtifactMediaTypes } from "./flux-artifact.ts";

/**
 * A deploy path's install as Argo CD objects (pure): per item an `Application` whose source is
 * the item's OCI artifact (Argo CD ≥ 3.1's native OCI source) pinned by digest, with automated
 * sync and prune; and one `Application` over them all (app of apps), itself an OCI artifact
 * pinned by digest, in which each item's Application carries a sync wave standing for the
 * deploy path's `dependsOn` (Argo CD has no dependency between Applications).
 */

const ARGOCD_API_VERSION = "argoproj.io/v1alpha1";
/**
 * Argo CD's repo-server (v3.1) takes one content layer of a type it allows; by default
 * `application/vnd.oci.image.layer.v1.tar`, `…tar+gzip` and Helm's chart type, not Flux's
 * `application/vnd.cncf.flux.content.v1.tar+gzip`. The layer's bytes are the same as Flux's;
 * the config is OCI's empty descriptor type.
 */
export const ARGOCD_ARTIFACT_MEDIA_TYPES: ArtifactMediaTypes = {
  config: "application/vnd.oci.empty.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
};
export const ARGOCD_SYNC_WAVE = "argocd.argoproj.io/sync-wave";
/** Deleting an Application with it deletes what the Application applied (cascade), as Flux's prune does. */
const ARGOCD_RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io";
/** The artifact (and the Application) holding the items' Applications: `${repository}/app-of-apps`. */
export const ARGOCD_APP_OF_APPS = "app-of-apps";

export interface ArgoCdTreeOptions {
  /** Argo CD's namespace, where the Applications live (`argocd`). */
  namespace: string;
  /** Prefixed to each item's name: `nvke-spire`. */
  prefix: string;
  /** `oci://host/path`: item `x`'s artifact is `${repository}/x`, the app of apps' `${repository}/app-of-apps`. */
  repository: string;
  /** The AppProject of every Application (`default`). */
  project: string;
  /** The cluster the items are applied to (`https://kubernetes.default.svc`: Argo CD's own). */
  server: string;
}

const LABELS = { "app.kubernetes.io/managed-by": "nvkectl", "app.kubernetes.io/part-of": "nvke" };
/**
 * Server-side apply (the install's; big CRDs exceed client-side apply's annotation), and no dry
 * run of a custom resource whose CRD another Application has not applied yet.
 */
const SYNC_OPTIONS = ["ServerSideApply=true", "SkipDryRunOnMissingResource=true"];
/** Argo CD retries a failed automated sync only when asked; a dependency that is not there yet is retried, as Flux retries at each interval. */
const RETRY = { limit: 10, backoff: { duration: "10s", factor: 2, maxDuration: "5m" } };

const argoName = (options: Pick<ArgoCdTreeOptions, "prefix">, item: string) => `${options.prefix}${item}`;
const repositoryOf = (options: Pick<ArgoCdTreeOptions, "repository">, item: string) =>
  `${options.repository.replace(/\/+$/, "")}/${item}`;

/**
 * The files of an item's Argo CD artifact: `manifests.yaml`, the same text as the item's Flux
 * artifact; and, for an item the install patches (Cluster API's controllers, for SPIRE), a
 * `kustomization.yaml` over it with the patches, which Argo CD then builds with kustomize.
 */
export function argoCdArtifactFiles(item: FluxItem): Record<string, string> {
  const files: Record<string, string> = { [FLUX_MANIFESTS_FILE]: fluxManifests(item) };
  if (item.patches !== undefined && item.patches.length > 0) {
    files["kustomization.yaml"] = dump(
      {
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
        resources: [FLUX_MANIFESTS_FILE],
        patches: item.patches.map((p) => ({ target: p.target, patch: p.patch })),
      },
      { lineWidth: -1, noRefs: true },
    );
  }
  return files;
}

/**
 * Each item's sync wave: 0 for an item that depends on nothing, else one more than the
 * highest wave it depends on; so every item is in a later wave than what it depends on.
 */
export function syncWaves(items: readonly FluxItem[]): Map<string, number> {
  const byName = new Map(items.map((item) => [item.name, item]));
  const waves = new Map<string, number>();
  const wave = (name: string, path: readonly string[]): number => {
    const known = waves.get(name);
    if (known !== undefined) return known;
    if (path.includes(name)) throw new Error(`items depend on each other in a cycle: ${[...path, name].join(" → ")}`);
    const item = byName.get(name);
    if (item === undefined) throw new Error(`item ${path.at(-1)} depends on ${name}, not in the tree`);
    const value = item.dependsOn.reduce((max, d) => Math.max(max, wave(d, [...path, name]) + 1), 0);
    waves.set(name, value);
    return value;
  };
  for (const item of items) wave(item.name, []);
  return waves;
}

/**
 * One `Application` per item, in the items' order: its source the item's artifact at
 * `${repository}/<item>`, pinned by the artifact's manifest digest (`targetRevision`), path `.`;
 * automated sync with prune and self-heal, server-side apply, retries; its sync wave from the
 * items' `dependsOn` (syncWaves), which Argo CD honours when the Applications are synced by the
 * app of apps.
 */
export function argoCdApplications(
  items: readonly FluxItem[],
  artifacts: readonly FluxArtifactRef[],
  options: ArgoCdTreeOptions,
): RenderedObject[] {
  const digests = new Map(artifacts.map((a) => [a.item, a.digest]));
  if (items.some((item) => item.name === ARGOCD_APP_OF_APPS)) {
    throw new Error(`an item is named ${ARGOCD_APP_OF_APPS}, the name of the Application over the items`);
  }
  const waves = syncWaves(items);
  return items.map((item): RenderedObject => {
    const digest = digests.get(item.name);
    if (digest === undefined) throw new Error(`no artifact for item ${item.name}`);
    return {
      apiVersion: ARGOCD_API_VERSION,
      kind: "Application",
      metadata: {
        name: argoName(options, item.name),
        namespace: options.namespace,
        labels: LABELS,
        annotations: {
          [ARGOCD_SYNC_WAVE]: String(waves.get(item.name) ?? 0),
          "nvke.nodekit.dev/item": item.title,
          ...(item.dependsOn.length === 0
            ? {}
            : { "nvke.nodekit.dev/depends-on": item.dependsOn.map((d) => argoName(options, d)).join(",") }),
        },
        finalizers: [ARGOCD_RESOURCES_FINALIZER],
      },
      spec: {
        project: options.project,
        source: { repoURL: repositoryOf(options, item.name), targetRevision: digest, path: "." },
        destination: { server: options.server },
        syncPolicy: {
          automated: { prune: true, selfHeal: true },
          syncOptions: SYNC_OPTIONS,
          retry: RETRY,
        },
      },
    };
  });
}

/** The files of the app of apps' artifact (and of the tree's `argocd/applications/`): `<Application name>.yaml` each. */
export function argoCdApplicationFiles(applications: readonly RenderedObject[]): Record<string, string> {
  return Object.fromEntries(
    applications.map((a) => [`${a.metadata.name}.yaml`, dump(a, { lineWidth: -1, noRefs: true })]),
  );
}

/**
 * The `Application` the operator applies: its source the app-of-apps artifact (the items'
 * Applications) pinned by `digest`, synced into Argo CD's namespace with prune, so that an item
 * the tree no longer has is deleted with what it applied.
 */
export function argoCdAppOfApps(digest: string, options: ArgoCdTreeOptions): RenderedObject {
  return {
    apiVersion: ARGOCD_API_VERSION,
    kind: "Application",
    metadata: {
      name: argoName(options, ARGOCD_APP_OF_APPS),
      namespace: options.namespace,
      labels: LABELS,
      annotations: { "nvke.nodekit.dev/item": "the Applications of the items, one sync wave per dependsOn level" },
    },
    spec: {
      project: options.project,
      source: { repoURL: repositoryOf(options, ARGOCD_APP_OF_APPS), targetRevision: digest, path: "." },
      destination: { server: options.server, namespace: options.namespace },
      syncPolicy: { automated: { prune: true, selfHeal: true }, retry: RETRY },
    },
  };
}
