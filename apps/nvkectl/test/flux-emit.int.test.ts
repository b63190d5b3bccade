import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createExecaRunner } from "@nodekit/process";
import { userErrorOf } from "@nodekit/test-utils";
import { buildProviderRepository, NICO_INFRASTRUCTURE } from "@nodekit/testenv/capi-repository";
import { load, loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { emitFluxTree } from "../src/services/install.ts";
import { emitSignedTree, type InstallFixture, installFixture } from "./install-fixture.ts";
import * as lab from "./lab-site.ts";

// nvkectl install --emit flux against the test tier (issue 24, item 2's fallback): the tree is
// emitted from a real cluster read (Nodes, providers), real helm template and clusterctl
// generate provider; then Flux's own CRDs (from its controllers' Go modules,
// tooling/flux-testbin) are installed on the real kube-apiserver and every emitted Flux object
// is applied with a server-side dry run, which the API server validates against those CRDs'
// schemas. The controllers themselves reconcile a tree in flux-reconcile.int.test.ts.

const API_KEY = "nico-key-Fx93qq";
const REPOSITORY = "oci://127.0.0.1:5000/nvke/site";

let fixture: InstallFixture;
let tree: string;
let result: Awaited<ReturnType<typeof emitFluxTree>>;

beforeAll(async () => {
  fixture = await installFixture("nvkectl-flux-");
  const { work } = fixture;
  tree = join(work, "tree");
  await buildProviderRepository(join(work, "providers"), { infrastructure: NICO_INFRASTRUCTURE });
  await fixture.addNodes("amd64", "site-node-1");
  await fixture.write(lab.emitFiles());
  result = await emitSignedTree(fixture, API_KEY, tree, REPOSITORY);
  // Flux's CRDs on the real API server, and its namespace.
  await fixture.engineCrds("flux");
}, 300_000);

afterAll(async () => {
  await fixture?.cleanup();
});

/** A tar+gzip layer's files, concatenated (tar(1) reads it). */
const unpack = (bytes: Uint8Array) =>
  execFileSync("tar", ["-xzOf", "-"], { input: bytes, maxBuffer: 256 * 1024 * 1024 }).toString("utf8");

/** Every file of the tree as text, the artifacts' layers unpacked. */
async function treeTexts(dir: string): Promise<string[]> {
  const texts: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const bytes = await readFile(join(entry.parentPath, entry.name));
    texts.push(bytes[0] === 0x1f && bytes[1] === 0x8b ? unpack(bytes) : bytes.toString("utf8"));
  }
  return texts;
}

describe("install --emit flux, validated by the real API server against Flux's CRDs", () => {
  test("every OCIRepository and Kustomization passes a server-side dry run; a malformed one does not", async () => {
    expect(result.objects.length).toBe(result.items.length * 2);
    for (const object of result.objects) await fixture.serverDryRun(object);
    // The tree as written, through kustomize (what docs/gitops.md applies).
    const applied = await fixture.kubectl(
      "apply",
      "--server-side",
      "--dry-run=server",
      "--kustomize",
      join(tree, "flux"),
    );
    expect(applied.split("\n").filter((line) => line.includes("serverside-applied"))).toHaveLength(
      result.objects.length,
    );
    // The dry run is a real check: a Kustomization Flux's schema refuses is refused.
    const kustomization = result.objects.find((o) => o.kind === "Kustomization");
    const spec = kustomization?.spec as Record<string, unknown>;
    await expect(fixture.serverDryRun({ ...kustomization, spec: { ...spec, prune: "yes" } })).rejects.toThrow(
      /spec.prune/,
    );
  });

  test("the items and their order: the install's, dependsOn and timeouts from the deploy path", () => {
    expect(result.items.map((item) => [item.name, item.dependsOn, item.timeout])).toEqual([
      ["cert-manager", [], "10m"],
      ["cluster-api", ["cert-manager"], "10m"],
      ["storage-class", [], "5m"],
      ["nico-credentials", ["cluster-api"], "5m"],
      ["widgets", [], "5m"],
      ["controller", ["widgets"], "7m"],
      ["client-networks", ["controller"], "5m"],
    ]);
    const controller = result.objects.find((o) => o.kind === "Kustomization" && o.metadata.name === "nvke-controller");
    expect(controller?.spec).toMatchObject({
      dependsOn: [{ name: "nvke-widgets" }],
      prune: true,
      wait: true,
      timeout: "7m",
      sourceRef: { kind: "OCIRepository", name: "nvke-controller" },
    });
  });

  test("each OCIRepository pins its artifact's digest, which the OCI layout holds, every blob matching its digest", async () => {
    const index = JSON.parse(await readFile(join(tree, "oci", "index.json"), "utf8"));
    for (const source of result.objects.filter((o) => o.kind === "OCIRepository")) {
      const spec = source.spec as { url: string; ref: { digest: string }; verify: unknown };
      const item = spec.url.slice(`${REPOSITORY}/`.length);
      const entry = index.manifests.find(
        (m: { annotations: Record<string, string> }) => m.annotations["org.opencontainers.image.ref.name"] === item,
      );
      expect(entry?.digest).toBe(spec.ref.digest);
      expect(spec.verify).toEqual({ provider: "cosign", secretRef: { name: "nvke-artifact-keys" } });
    }
    for (const name of await readdir(join(tree, "oci", "blobs", "sha256"))) {
      const bytes = await readFile(join(tree, "oci", "blobs", "sha256", name));
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(name);
    }
  });

  test("what the artifacts hold: rendered with the stack's values for the nodes' architecture, placed in each item's namespace", async () => {
    const layer = async (item: string) => {
      const artifact = result.artifacts.find((a) => a.item === item);
      const blob = artifact?.blobs.find((b) => b.mediaType.endsWith("tar+gzip"));
      return loadAll(unpack(blob?.bytes ?? new Uint8Array())) as Array<{
        kind: string;
        metadata: { name: string; namespace?: string };
        spec?: { template?: { spec?: { nodeSelector?: unknown } } };
      }>;
    };
    const controller = await layer("controller");
    expect(controller.map((o) => `${o.kind}/${o.metadata.namespace ?? "-"}/${o.metadata.name}`)).toEqual([
      "Namespace/-/nke-controller",
      "Deployment/nke-controller/nvke-controller",
    ]);
    expect(controller[1]?.spec?.template?.spec?.nodeSelector).toEqual({ "kubernetes.io/arch": "amd64" });
    expect((await layer("widgets")).map((o) => `${o.kind}/${o.metadata.namespace}`)).toEqual(["ConfigMap/widgets"]);
    const capi = await layer("cluster-api");
    expect(
      capi.filter((o) => o.kind === "Deployment").map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    ).toEqual(expect.arrayContaining(["capi-system/capi-controller-manager", "nico-system/nico-controller-manager"]));
  });

  test("no Secret and no key anywhere in the tree; the Secrets it needs are named", async () => {
    const texts = await treeTexts(tree);
    expect(texts.length).toBeGreaterThan(result.items.length);
    for (const text of texts) {
      expect(text).not.toContain(API_KEY);
      for (const doc of text.startsWith("{") ? [] : loadAll(text).filter(Boolean)) {
        expect((doc as { kind?: string }).kind).not.toBe("Secret");
      }
    }
    expect(result.secrets).toEqual([
      "nke-controller/nvke-nico-credentials",
      "nico-system/nico-credentials",
      "flux-system/nvke-artifact-keys",
    ]);
    expect(load(await readFile(join(tree, "flux", "kustomization.yaml"), "utf8"))).toEqual({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: result.items.map((item) => `${item.name}.yaml`),
    });
  });

  test("emitting again gives the same digests and replaces the tree; a directory holding other files is refused", async () => {
    const again = await emitSignedTree(fixture, API_KEY, tree, REPOSITORY);
    expect(again.artifacts.map((a) => a.digest)).toEqual(result.artifacts.map((a) => a.digest));
    await fixture.write({ "other/notes.txt": "mine\n" });
    const error = await userErrorOf(
      emitFluxTree({
        inputs: fixture.inputs({ NVKE_NICO_API_KEY: API_KEY }),
        runner: createExecaRunner(),
        dir: fixture.work,
        dryRun: false,
        repository: REPOSITORY,
        verify: undefined,
        insecure: false,
      }),
    );
    expect(error.code).toBe("FLUX_EMIT_DIR_NOT_EMPTY");
  });
});
