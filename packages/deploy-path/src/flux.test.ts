import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, test } from "vitest";
import {
  clusterScopedKinds,
  FLUX_CONTENT_MEDIA_TYPE,
  type FluxItem,
  fluxManifests,
  fluxObjects,
  inNamespace,
  type RenderedObject,
  secretsIn,
} from "./flux.ts";
import { ociLayoutFiles, packFluxArtifact } from "./flux-artifact.ts";
import { packedManifests } from "./test-support.ts";

const deployment = (name: string, namespace?: string): RenderedObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
  spec: { template: { spec: { containers: [{ name: "manager", image: "x" }] } } },
});

const items: FluxItem[] = [
  { name: "spire-crds", title: "chart spire-crds", dependsOn: [], timeout: "5m", objects: [] },
  { name: "spire", title: "chart spire", dependsOn: ["spire-crds"], timeout: "10m", objects: [] },
  {
    name: "cluster-api",
    title: "Cluster API",
    dependsOn: [],
    timeout: "10m",
    objects: [deployment("capi-controller-manager", "capi-system")],
    patches: [
      {
        target: { group: "apps", version: "v1", kind: "Deployment", namespace: "capi-system", name: "capi" },
        patch: '{"spec":{}}',
      },
    ],
  },
];
const digests = items.map((item, i) => ({ item: item.name, digest: `sha256:${String(i).repeat(64)}` }));

describe("fluxObjects", () => {
  test("an OCIRepository pinned by digest and a Kustomization per item, in the items' order", () => {
    // Given three items and their artifacts' digests
    // When the tree is planned with cosign verification
    const objects = fluxObjects(items, digests, {
      namespace: "flux-system",
      prefix: "nvke-",
      repository: "oci://registry.example.com/nvke/",
      interval: "10m",
      verify: { provider: "cosign", secretRef: "nvke-keys" },
    });
    // Then the objects are exactly these
    const labels = { "app.kubernetes.io/managed-by": "nvkectl", "app.kubernetes.io/part-of": "nvke" };
    expect(objects.slice(2, 4)).toEqual([
      {
        apiVersion: "source.toolkit.fluxcd.io/v1",
        kind: "OCIRepository",
        metadata: { name: "nvke-spire", namespace: "flux-system", labels },
        spec: {
          interval: "10m",
          url: "oci://registry.example.com/nvke/spire",
          ref: { digest: `sha256:${"1".repeat(64)}` },
          verify: { provider: "cosign", secretRef: { name: "nvke-keys" } },
        },
      },
      {
        apiVersion: "kustomize.toolkit.fluxcd.io/v1",
        kind: "Kustomization",
        metadata: {
          name: "nvke-spire",
          namespace: "flux-system",
          labels,
          annotations: { "nvke.nodekit.dev/item": "chart spire" },
        },
        spec: {
          interval: "10m",
          retryInterval: "1m",
          sourceRef: { kind: "OCIRepository", name: "nvke-spire" },
          path: "./",
          prune: true,
          wait: true,
          timeout: "10m",
          dependsOn: [{ name: "nvke-spire-crds" }],
        },
      },
    ]);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      "OCIRepository/nvke-spire-crds",
      "Kustomization/nvke-spire-crds",
      "OCIRepository/nvke-spire",
      "Kustomization/nvke-spire",
      "OCIRepository/nvke-cluster-api",
      "Kustomization/nvke-cluster-api",
    ]);
    // The patch goes to the Kustomization that applies the patched object; no dependsOn where none is declared.
    const capi = objects[5]?.spec as Record<string, unknown>;
    expect(capi.patches).toEqual(items[2]?.patches);
    expect(capi.dependsOn).toBeUndefined();
  });

  test("without verification no verify; plain HTTP says insecure", () => {
    const [source] = fluxObjects(items.slice(0, 1), digests, {
      namespace: "flux-system",
      prefix: "",
      repository: "oci://127.0.0.1:5000/nvke",
      interval: "1m",
      insecure: true,
    });
    expect(source?.spec).toEqual({
      interval: "1m",
      url: "oci://127.0.0.1:5000/nvke/spire-crds",
      ref: { digest: digests[0]?.digest },
      insecure: true,
    });
  });

  test("a failed Kustomization tries again after retryInterval (1m unless given), not after the whole interval", () => {
    const options = { namespace: "f", prefix: "", repository: "oci://r/p", interval: "10m" };
    const retryOf = (objects: ReturnType<typeof fluxObjects>) =>
      objects
        .filter((o) => o.kind === "Kustomization")
        .map((o) => (o.spec as { retryInterval?: string }).retryInterval);
    expect(retryOf(fluxObjects(items, digests, options))).toEqual(["1m", "1m", "1m"]);
    expect(retryOf(fluxObjects(items, digests, { ...options, retryInterval: "30s" }))).toEqual(["30s", "30s", "30s"]);
  });

  test("an item without an artifact, or depending on one outside the tree, is a bug", () => {
    const options = { namespace: "f", prefix: "", repository: "oci://r/p", interval: "1m" };
    expect(() => fluxObjects(items, digests.slice(0, 1), options)).toThrow(/no artifact for item spire/);
    expect(() => fluxObjects([items[1] as FluxItem], digests, options)).toThrow(
      /depends on spire-crds, not in the tree/,
    );
  });
});

describe("namespaces and secrets", () => {
  test("namespaced objects without a namespace get the item's; cluster-scoped kinds, built-in or from a CRD, do not", () => {
    const crd: RenderedObject = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "clusterspiffeids.spire.spiffe.io" },
      spec: { group: "spire.spiffe.io", scope: "Cluster", names: { kind: "ClusterSPIFFEID" } },
    };
    const scoped = clusterScopedKinds([crd]);
    const id: RenderedObject = {
      apiVersion: "spire.spiffe.io/v1alpha1",
      kind: "ClusterSPIFFEID",
      metadata: { name: "a" },
    };
    const role: RenderedObject = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "r" },
    };
    expect(inNamespace(deployment("d"), "spire-system", scoped).metadata.namespace).toBe("spire-system");
    expect(inNamespace(deployment("d", "other"), "spire-system", scoped).metadata.namespace).toBe("other");
    expect(inNamespace(id, "spire-system", scoped).metadata.namespace).toBeUndefined();
    expect(inNamespace(role, "spire-system", scoped).metadata.namespace).toBeUndefined();
    expect(inNamespace(deployment("d"), undefined, scoped).metadata.namespace).toBeUndefined();
  });

  test("secretsIn names every Secret", () => {
    const secret: RenderedObject = { apiVersion: "v1", kind: "Secret", metadata: { name: "k", namespace: "n" } };
    expect(secretsIn([deployment("d"), secret])).toEqual(["n/k"]);
    expect(secretsIn([deployment("d")])).toEqual([]);
  });
});

describe("packFluxArtifact", () => {
  test("Flux's format, the same digest for the same files, and a layer tar reads back", async () => {
    const options = {
      item: "spire",
      files: { "manifests.yaml": fluxManifests(items[2] as FluxItem) },
      source: "nvkectl://site/nico",
      revision: "0.9.0",
      created: "1970-01-01T00:00:00Z",
    };
    const a = await packFluxArtifact(options);
    const b = await packFluxArtifact(options);
    expect(b.digest).toBe(a.digest);
    const manifest = JSON.parse(new TextDecoder().decode(a.manifest.bytes));
    expect(manifest.config.mediaType).toBe("application/vnd.cncf.flux.config.v1+json");
    expect(manifest.layers).toHaveLength(1);
    expect(manifest.layers[0].mediaType).toBe(FLUX_CONTENT_MEDIA_TYPE);
    expect(manifest.annotations["org.opencontainers.image.revision"]).toBe("0.9.0");
    const digestOf = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    expect(a.digest).toBe(digestOf(a.manifest.bytes));
    for (const blob of a.blobs) expect(blob.digest).toBe(digestOf(blob.bytes));

    // The layer is a tar.gz that tar(1) lists and extracts to the same manifests file.
    const layer = a.blobs.find((blob) => blob.mediaType === FLUX_CONTENT_MEDIA_TYPE);
    const dir = mkdtempSync(join(tmpdir(), "flux-test-"));
    try {
      writeFileSync(join(dir, "layer.tar"), gunzipSync(layer?.bytes ?? new Uint8Array()));
      expect(execFileSync("tar", ["-tf", "layer.tar"], { cwd: dir, encoding: "utf8" })).toBe("manifests.yaml\n");
      execFileSync("tar", ["-xf", "layer.tar"], { cwd: dir });
      expect(readFileSync(join(dir, "manifests.yaml"), "utf8")).toBe(options.files["manifests.yaml"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Other content, another digest.
    const c = await packFluxArtifact({ ...options, files: { "manifests.yaml": "kind: Other\n" } });
    expect(c.digest).not.toBe(a.digest);
  });

  test("the OCI layout names each artifact by its item and holds every blob", async () => {
    const a = await packedManifests("spire", "a: 1\n");
    const files = ociLayoutFiles([a]);
    const index = JSON.parse(new TextDecoder().decode(files.get("index.json")));
    expect(index.manifests).toEqual([
      {
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        digest: a.digest,
        size: a.manifest.bytes.length,
        annotations: { "org.opencontainers.image.ref.name": "spire" },
      },
    ]);
    expect(new TextDecoder().decode(files.get("oci-layout"))).toContain('"imageLayoutVersion": "1.0.0"');
    expect([...files.keys()].filter((k) => k.startsWith("blobs/")).sort()).toEqual(
      [a.digest, ...a.blobs.map((b) => b.digest)].map((d) => `blobs/sha256/${d.slice(7)}`).sort(),
    );
  });
});
