import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { access, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { FluxArtifact } from "@nodekit/deploy-path";
import { OciClient } from "@nodekit/oci";
import { createExecaRunner, Redactor } from "@nodekit/process";
import { type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { userErrorOf } from "@nodekit/test-utils";
import { buildProviderRepository, NICO_INFRASTRUCTURE } from "@nodekit/testenv/capi-repository";
import { load, loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { emitArgoCdTree, emitFluxTree } from "../src/services/install.ts";
import { type InstallFixture, installFixture } from "./install-fixture.ts";
import * as lab from "./lab-site.ts";

// nvkectl install --emit argocd against the test tier (issue 24, item 2's Argo CD part): the
// same site as flux-emit.int.test.ts, emitted from a real cluster read, real helm template and
// clusterctl generate provider, as Argo CD Applications; then Argo CD's own Application and
// AppProject CRDs (from its v3.1.8 Go module, tooling/argocd-crds) are installed on the real
// kube-apiserver and every emitted Application is applied with a server-side dry run, which the
// API server validates against the CRD's schema. Each Application's digest is checked against
// the artifact holding what --emit flux renders for its item, and the artifacts are pushed to
// a loopback registry.

const API_KEY = "nico-key-Ag71zz";

let fixture: InstallFixture;
let registry: RunningRegistry;
let repository: string;
let tree: string;
let result: Awaited<ReturnType<typeof emitArgoCdTree>>;
let dryRun: Awaited<ReturnType<typeof emitArgoCdTree>>;
let flux: Awaited<ReturnType<typeof emitFluxTree>>;

beforeAll(async () => {
  fixture = await installFixture("nvkectl-argocd-");
  const { work } = fixture;
  tree = join(work, "tree");
  registry = await startRegistry({ kind: "distribution" });
  repository = `oci://${registry.host}/nvke/argocd`;
  await buildProviderRepository(join(work, "providers"), { infrastructure: NICO_INFRASTRUCTURE });
  await fixture.addNodes("amd64", "site-node-1");
  await fixture.write(lab.emitFiles());
  const emit = (dryRun: boolean) =>
    emitArgoCdTree({
      inputs: fixture.inputs({ NVKE_NICO_API_KEY: API_KEY }),
      runner: createExecaRunner(),
      dir: tree,
      dryRun,
      repository,
      ...(dryRun ? {} : { push: { access: { plainHttp: true, redactor: new Redactor() } } }),
    });
  // The dry run first: it must write nothing.
  dryRun = await emit(true);
  result = await emit(false);
  flux = await emitFluxTree({
    inputs: fixture.inputs({ NVKE_NICO_API_KEY: API_KEY }),
    runner: createExecaRunner(),
    dir: join(work, "flux-tree"),
    dryRun: true,
    repository,
    verify: undefined,
    insecure: true,
  });
  // Argo CD's CRDs on the real API server, and its namespace.
  await fixture.engineCrds("argocd");
}, 300_000);

afterAll(async () => {
  await registry?.stop();
  await fixture?.cleanup();
});

/** A tar+gzip layer's files by name. */
const unpack = (bytes: Uint8Array): Record<string, string> => {
  const names = execFileSync("tar", ["-tzf", "-"], { input: bytes }).toString().trim().split("\n");
  return Object.fromEntries(
    names.map((name) => [
      name,
      execFileSync("tar", ["-xzOf", "-", name], { input: bytes, maxBuffer: 256 * 1024 * 1024 }).toString("utf8"),
    ]),
  );
};

const blobOf = (dir: string, digest: string) => readFile(join(dir, "oci", "blobs", "sha256", digest.slice(7)));

/** The one layer of the layout's manifest `digest`: its media type and its files. */
async function layerOf(dir: string, digest: string) {
  const manifest = JSON.parse((await blobOf(dir, digest)).toString("utf8"));
  expect(manifest.layers).toHaveLength(1);
  return {
    mediaType: manifest.layers[0].mediaType as string,
    files: unpack(await blobOf(dir, manifest.layers[0].digest)),
  };
}

const fluxLayer = (artifact: FluxArtifact | undefined) =>
  unpack(artifact?.blobs.find((b) => b.mediaType.endsWith("tar+gzip"))?.bytes ?? new Uint8Array());

describe("install --emit argocd, validated by the real API server against Argo CD's CRD", () => {
  test("every Application passes a server-side dry run, the tree's files too; a malformed one is refused", async () => {
    expect(result.applications).toHaveLength(result.items.length);
    for (const application of [...result.applications, result.appOfApps]) await fixture.serverDryRun(application);
    const applied = await fixture.kubectl(
      "apply",
      "--server-side",
      "--dry-run=server",
      "--recursive",
      "--filename",
      join(tree, "argocd"),
    );
    expect(applied.split("\n").filter((line) => line.includes("serverside-applied"))).toHaveLength(
      result.items.length + 1,
    );
    // The dry run is a real check: what the CRD's schema refuses is refused.
    const application = result.applications[0] ?? result.appOfApps;
    const spec = application.spec as { syncPolicy: { automated: Record<string, unknown> } };
    const wrong = { ...spec, syncPolicy: { ...spec.syncPolicy, automated: { prune: "yes" } } };
    await expect(fixture.serverDryRun({ ...application, spec: wrong })).rejects.toThrow(
      /spec.syncPolicy.automated.prune/,
    );
    const { destination: _destination, ...noDestination } = application.spec as Record<string, unknown>;
    await expect(fixture.serverDryRun({ ...application, spec: noDestination })).rejects.toThrow(/spec.destination/);
  });

  test("each Application pins by digest the artifact holding what --emit flux renders for its item", async () => {
    expect(result.items.map((item) => item.name)).toEqual(flux.items.map((item) => item.name));
    const index = JSON.parse(await readFile(join(tree, "oci", "index.json"), "utf8"));
    for (const [i, application] of result.applications.entries()) {
      const item = result.items[i];
      const source = (application.spec as { source: { repoURL: string; targetRevision: string; path: string } }).source;
      expect(source).toEqual({
        repoURL: `${repository}/${item?.name}`,
        targetRevision: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        path: ".",
      });
      const entry = index.manifests.find(
        (m: { annotations: Record<string, string> }) =>
          m.annotations["org.opencontainers.image.ref.name"] === item?.name,
      );
      expect(entry?.digest).toBe(source.targetRevision);
      // The manifest's bytes hash to the digest; its one layer is of the type Argo CD takes by default.
      expect(
        `sha256:${createHash("sha256")
          .update(await blobOf(tree, source.targetRevision))
          .digest("hex")}`,
      ).toBe(source.targetRevision);
      const layer = await layerOf(tree, source.targetRevision);
      expect(layer.mediaType).toBe("application/vnd.oci.image.layer.v1.tar+gzip");
      const fluxFiles = fluxLayer(flux.artifacts.find((a) => a.item === item?.name));
      expect(layer.files["manifests.yaml"]).toBe(fluxFiles["manifests.yaml"]);
      expect(loadAll(layer.files["manifests.yaml"] ?? "")).toEqual(item?.objects);
      // The SPIRE patch: in the artifact, the same patches Flux's Kustomization carries.
      const kustomization = flux.objects.find(
        (o) => o.kind === "Kustomization" && o.metadata.name === `nvke-${item?.name}`,
      );
      const patches = (kustomization?.spec as { patches?: unknown[] } | undefined)?.patches;
      if (patches === undefined) {
        expect(Object.keys(layer.files)).toEqual(["manifests.yaml"]);
      } else {
        expect(load(layer.files["kustomization.yaml"] ?? "")).toEqual({
          apiVersion: "kustomize.config.k8s.io/v1beta1",
          kind: "Kustomization",
          resources: ["manifests.yaml"],
          patches,
        });
      }
    }
    expect(result.items.find((item) => item.name === "cluster-api")?.patches?.length).toBeGreaterThan(0);
  });

  test("the app of apps pins the artifact holding exactly the tree's Applications; sync waves follow dependsOn", async () => {
    const root = result.appOfApps.spec as { source: { targetRevision: string; repoURL: string } };
    expect(root.source.repoURL).toBe(`${repository}/app-of-apps`);
    const layer = await layerOf(tree, root.source.targetRevision);
    const written = await readdir(join(tree, "argocd", "applications"));
    expect(Object.keys(layer.files).sort()).toEqual(written.sort());
    for (const name of written) {
      expect(layer.files[name]).toBe(await readFile(join(tree, "argocd", "applications", name), "utf8"));
    }
    expect(load(await readFile(join(tree, "argocd", "app-of-apps.yaml"), "utf8"))).toEqual(result.appOfApps);
    const wave = (item: string) =>
      Number(
        (
          result.applications.find((a) => a.metadata.name === `nvke-${item}`)?.metadata.annotations as
            | Record<string, string>
            | undefined
        )?.["argocd.argoproj.io/sync-wave"],
      );
    expect(result.items.map((item) => [item.name, wave(item.name)])).toEqual([
      ["cert-manager", 0],
      ["cluster-api", 1],
      ["storage-class", 0],
      ["nico-credentials", 2],
      ["widgets", 0],
      ["controller", 1],
      ["client-networks", 2],
    ]);
  });

  test("the dry run lists exactly the files the run wrote, and wrote none of them", async () => {
    expect(dryRun.files.map((f) => f.path)).toEqual(result.files.map((f) => f.path));
    for (const [i, file] of dryRun.files.entries()) {
      expect(Buffer.from(file.bytes).equals(await readFile(join(tree, result.files[i]?.path ?? "")))).toBe(true);
    }
    expect(dryRun.pushed).toEqual([]);
    // The flux emit above was a dry run: its directory does not exist.
    await expect(access(join(fixture.work, "flux-tree"))).rejects.toThrow(/ENOENT/);
  });

  test("every artifact is pushed by digest: the registry serves the manifests the Applications pin", async () => {
    expect(result.pushed.map((p) => p.item)).toEqual([...result.items.map((item) => item.name), "app-of-apps"]);
    const client = new OciClient({ plainHttp: true });
    for (const application of [...result.applications, result.appOfApps]) {
      const source = (application.spec as { source: { repoURL: string; targetRevision: string } }).source;
      const fetched = await client.getManifest(`${source.repoURL.slice("oci://".length)}@${source.targetRevision}`);
      expect(fetched.descriptor.digest).toBe(source.targetRevision);
    }
  });

  test("no Secret and no key anywhere in the tree; the Secrets it needs are named", async () => {
    for (const entry of await readdir(tree, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const bytes = await readFile(join(entry.parentPath, entry.name));
      const texts = bytes[0] === 0x1f && bytes[1] === 0x8b ? Object.values(unpack(bytes)) : [bytes.toString("utf8")];
      for (const text of texts) {
        expect(text).not.toContain(API_KEY);
        for (const doc of text.startsWith("{") ? [] : loadAll(text).filter(Boolean)) {
          expect((doc as { kind?: string }).kind).not.toBe("Secret");
        }
      }
    }
    expect(result.secrets).toEqual(["nke-controller/nvke-nico-credentials", "nico-system/nico-credentials"]);
  });

  test("a directory holding other files (here, the deploy path) is refused", async () => {
    const error = await userErrorOf(
      emitArgoCdTree({
        inputs: fixture.inputs({ NVKE_NICO_API_KEY: API_KEY }),
        runner: createExecaRunner(),
        dir: join(fixture.work, "path"),
        dryRun: false,
        repository,
      }),
    );
    expect(error.code).toBe("FLUX_EMIT_DIR_NOT_EMPTY");
    expect(error.message).toMatch(/not an emitted Argo CD tree/);
  });
});
