import { execFileSync } from "node:child_process";
import { load } from "js-yaml";
import { describe, expect, test } from "vitest";
import {
  ARGOCD_APP_OF_APPS,
  ARGOCD_ARTIFACT_MEDIA_TYPES,
  ARGOCD_SYNC_WAVE,
  type ArgoCdTreeOptions,
  argoCdApplicationFiles,
  argoCdApplications,
  argoCdAppOfApps,
  argoCdArtifactFiles,
  syncWaves,
} from "./argocd.ts";
import { FLUX_MANIFESTS_FILE, type FluxItem, fluxManifests, type RenderedObject } from "./flux.ts";
import { packFluxArtifact } from "./flux-artifact.ts";

const configMap = (name: string, namespace: string): RenderedObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data: { a: "1" },
});

const items: FluxItem[] = [
  { name: "cert-manager", title: "cert-manager", dependsOn: [], timeout: "10m", objects: [] },
  {
    name: "cluster-api",
    title: "Cluster API",
    dependsOn: ["cert-manager"],
    timeout: "10m",
    objects: [configMap("capi", "capi-system")],
    patches: [
      {
        target: { group: "apps", version: "v1", kind: "Deployment", namespace: "capi-system", name: "capi" },
        patch: '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"capi","namespace":"capi-system"}}',
      },
    ],
  },
  { name: "spire-crds", title: "chart spire-crds", dependsOn: [], timeout: "5m", objects: [] },
  { name: "spire", title: "chart spire", dependsOn: ["spire-crds"], timeout: "10m", objects: [] },
  {
    name: "controller",
    title: "chart controller",
    dependsOn: ["spire", "cluster-api"],
    timeout: "7m",
    objects: [configMap("c", "nke")],
  },
];
const artifacts = items.map((item, i) => ({ item: item.name, digest: `sha256:${String(i).repeat(64)}` }));
const options: ArgoCdTreeOptions = {
  namespace: "argocd",
  prefix: "nvke-",
  repository: "oci://registry.example.test/nvke/argocd/",
  project: "default",
  server: "https://kubernetes.default.svc",
};

describe("argoCdApplications", () => {
  const applications = argoCdApplications(items, artifacts, options);

  test("one Application per item, in order, its source the item's artifact pinned by digest", () => {
    expect(applications.map((a) => a.metadata.name)).toEqual(items.map((item) => `nvke-${item.name}`));
    expect(applications[1]).toMatchObject({
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Application",
      metadata: { namespace: "argocd", finalizers: ["resources-finalizer.argocd.argoproj.io"] },
      spec: {
        project: "default",
        source: {
          repoURL: "oci://registry.example.test/nvke/argocd/cluster-api",
          targetRevision: `sha256:${"1".repeat(64)}`,
          path: ".",
        },
        destination: { server: "https://kubernetes.default.svc" },
        syncPolicy: {
          automated: { prune: true, selfHeal: true },
          syncOptions: ["ServerSideApply=true", "SkipDryRunOnMissingResource=true"],
        },
      },
    });
  });

  test("sync waves stand for dependsOn: every item after what it depends on", () => {
    const wave = (name: string) => {
      const annotations = applications.find((a) => a.metadata.name === `nvke-${name}`)?.metadata.annotations;
      return Number((annotations as Record<string, string> | undefined)?.[ARGOCD_SYNC_WAVE]);
    };
    expect(items.map((item) => wave(item.name))).toEqual([0, 1, 0, 1, 2]);
    for (const item of items) for (const d of item.dependsOn) expect(wave(d)).toBeLessThan(wave(item.name));
    expect(applications[4]?.metadata.annotations).toMatchObject({
      "nvke.nodekit.dev/depends-on": "nvke-spire,nvke-cluster-api",
    });
  });

  test("a missing artifact, an unknown or cyclic dependency, or an item named as the app of apps is refused", () => {
    expect(() => argoCdApplications(items, artifacts.slice(1), options)).toThrow(/no artifact for item cert-manager/);
    const unknown = [{ ...items[0], dependsOn: ["nope"] } as FluxItem];
    expect(() => argoCdApplications(unknown, artifacts, options)).toThrow(/depends on nope, not in the tree/);
    const a = { ...items[0], name: "a", dependsOn: ["b"] } as FluxItem;
    const b = { ...items[0], name: "b", dependsOn: ["a"] } as FluxItem;
    expect(() => syncWaves([a, b])).toThrow(/cycle: a → b → a/);
    const clash = [{ ...items[0], name: ARGOCD_APP_OF_APPS } as FluxItem];
    expect(() => argoCdApplications(clash, [{ item: ARGOCD_APP_OF_APPS, digest: "sha256:x" }], options)).toThrow(
      /app-of-apps/,
    );
  });

  test("the app of apps pins the artifact of the Applications and syncs them into Argo CD's namespace", () => {
    const root = argoCdAppOfApps("sha256:abc", options);
    expect(root).toMatchObject({
      metadata: { name: "nvke-app-of-apps", namespace: "argocd" },
      spec: {
        source: { repoURL: "oci://registry.example.test/nvke/argocd/app-of-apps", targetRevision: "sha256:abc" },
        destination: { namespace: "argocd" },
        syncPolicy: { automated: { prune: true } },
      },
    });
    const files = argoCdApplicationFiles(applications);
    expect(Object.keys(files)).toEqual(applications.map((a) => `${a.metadata.name}.yaml`));
    expect(Object.values(files).map((text) => load(text))).toEqual(applications);
  });
});

describe("argoCdArtifactFiles", () => {
  test("Flux's manifests.yaml as it is; a kustomization.yaml with the patches only for a patched item", () => {
    expect(argoCdArtifactFiles(items[4] as FluxItem)).toEqual({
      [FLUX_MANIFESTS_FILE]: fluxManifests(items[4] as FluxItem),
    });
    const capi = argoCdArtifactFiles(items[1] as FluxItem);
    expect(capi[FLUX_MANIFESTS_FILE]).toBe(fluxManifests(items[1] as FluxItem));
    expect(load(capi["kustomization.yaml"] ?? "")).toEqual({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: [FLUX_MANIFESTS_FILE],
      patches: items[1]?.patches,
    });
  });

  test("packed with the OCI image layer type Argo CD's repo-server takes by default; the layer's bytes as Flux's", async () => {
    const common = { item: "x", source: "nvkectl://s/p", revision: "r", created: "1970-01-01T00:00:00Z" };
    const files = argoCdArtifactFiles(items[4] as FluxItem);
    const argo = await packFluxArtifact({ ...common, files, mediaTypes: ARGOCD_ARTIFACT_MEDIA_TYPES });
    const flux = await packFluxArtifact({ ...common, files });
    const manifest = JSON.parse(new TextDecoder().decode(argo.manifest.bytes));
    expect(manifest.config.mediaType).toBe("application/vnd.oci.empty.v1+json");
    expect(manifest.layers.map((l: { mediaType: string }) => l.mediaType)).toEqual([
      "application/vnd.oci.image.layer.v1.tar+gzip",
    ]);
    expect(argo.blobs[1]?.bytes).toEqual(flux.blobs[1]?.bytes);
    expect(argo.digest).not.toBe(flux.digest);
    const listed = execFileSync("tar", ["-tzf", "-"], { input: argo.blobs[1]?.bytes }).toString();
    expect(listed.trim().split("\n")).toEqual([FLUX_MANIFESTS_FILE]);
  });
});
