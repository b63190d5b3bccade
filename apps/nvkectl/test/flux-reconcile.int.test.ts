import { generateKeyPairSync } from "node:crypto";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publicKeyOf, pushFluxArtifacts } from "@nodekit/deploy-path";
import { OciClient } from "@nodekit/oci";
import { createExecaRunner } from "@nodekit/process";
import { type RunningRegistry, startRegistry } from "@nodekit/registry-harness";
import { type ControlPlane, startControlPlane } from "@nodekit/testenv";
import { buildProviderRepository, NICO_INFRASTRUCTURE } from "@nodekit/testenv/capi-repository";
import { type ControllerStandIn, startControllerStandIn } from "@nodekit/testenv/controller-standin";
import { type FluxControllers, startFluxControllers } from "@nodekit/testenv/flux-controllers";
import { type NicoProviderStandIn, startNicoProviderStandIn } from "@nodekit/testenv/nico-provider-standin";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type emitFluxTree, install } from "../src/services/install.ts";
import { emitSignedTree, type InstallFixture, installFixture } from "./install-fixture.ts";
import * as lab from "./lab-site.ts";

// nvkectl install --emit flux, reconciled by Flux's real controllers (issue 24, item 2):
// source-controller v1.9.0 and kustomize-controller v1.9.6, built from their Go modules
// (tooling/flux-testbin), run as processes against this file's own kube-apiserver with a
// kubeconfig. The tree is emitted, its artifacts pushed by digest to a loopback registry and
// signed (cosign's classic signature, with a key), the tree applied, and the controllers
// reconcile it; the same inputs are installed with `nvkectl install` on a second, identical
// control plane, and the two sites are compared object by object. The controller-manager stand-in
// makes Deployments available on both (no pod runs here), as the Kustomizations wait for them.
// And source-controller refuses an artifact signed by another key.

const API_KEY = "nico-key-Rc47ty";
const PATH_NAME = "nvke/site";

let fixture: InstallFixture;
let registry: RunningRegistry;
let flux: FluxControllers;
let canary: string | undefined;
let installed: ControlPlane;
const standIns: ControllerStandIn[] = [];
const nicoProviders: NicoProviderStandIn[] = [];
let repository: string;
let signingKey: string;
let otherKey: string;
let emitted: Awaited<ReturnType<typeof emitFluxTree>>;
let fluxSeconds = 0;

const newKey = () =>
  generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();

const kubectlOn = async (kubeconfig: string, args: string[], input?: string) =>
  (
    await createExecaRunner().run({
      command: "kubectl",
      args: ["--kubeconfig", kubeconfig, ...args],
      ...(input === undefined ? {} : { input }),
    })
  ).stdout;

const jsonOn = async (kubeconfig: string, ...args: string[]) =>
  JSON.parse(await kubectlOn(kubeconfig, [...args, "--output=json"]));

/** The Secret in flux-system with the public key of `privateKey`, as source-controller verifies with it. */
const cosignKeySecret = (name: string, privateKey: string) =>
  fixture.kubectl(
    "create",
    "secret",
    "generic",
    name,
    "--namespace=flux-system",
    `--from-literal=cosign.pub=${publicKeyOf(privateKey)}`,
  );

/** The Secrets an operator creates before applying the tree (docs/gitops.md): the NICo key's, in their namespaces. */
const operatorSecrets = (apiKey: string) =>
  ["nico-system/nico-credentials", "nke-controller/nvke-nico-credentials"].flatMap((ref) => {
    const [namespace = "", name = ""] = ref.split("/");
    return [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
      { apiVersion: "v1", kind: "Secret", metadata: { namespace, name }, stringData: { apiKey } },
    ];
  });

const nicoStandIn = (kubeconfig: string) =>
  startNicoProviderStandIn(kubeconfig, {
    check: (key) =>
      key === API_KEY
        ? { state: "HEALTHY", message: "authenticated as organization org-42" }
        : { state: "INVALID", message: "NICo refused the API key" },
  });

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const ready = (object: { status?: { conditions?: Condition[] } }) =>
  object.status?.conditions?.find((c) => c.type === "Ready");

/** Polls until every object of `resource` in flux-system satisfies `done`, or fails with their conditions. */
async function waitFor(
  resource: string,
  done: (items: Array<{ metadata: { name: string }; status?: { conditions?: Condition[] } }>) => boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let items: Array<{ metadata: { name: string }; status?: { conditions?: Condition[] } }> = [];
  while (Date.now() < deadline) {
    items = (await jsonOn(fixture.admin, "get", resource, "--namespace=flux-system")).items;
    if (items.length > 0 && done(items)) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const state = items.map((i) => `${i.metadata.name}: ${JSON.stringify(ready(i) ?? "no Ready condition")}`);
  throw new Error(
    `${resource} not done in ${timeoutMs / 1000} s:\n${state.join("\n")}\nsource-controller:\n${flux.log("source-controller", 10)}\nkustomize-controller:\n${flux.log("kustomize-controller", 10)}`,
  );
}

beforeAll(async () => {
  fixture = await installFixture("nvkectl-flux-reconcile-");
  const { work, admin } = fixture;
  registry = await startRegistry({ kind: "distribution" });
  repository = `oci://${registry.host}/${PATH_NAME}`;
  await buildProviderRepository(join(work, "providers"), { infrastructure: NICO_INFRASTRUCTURE });
  await fixture.addNodes("arm64", "site-node-1", "site-node-2");
  await fixture.write(
    lab.files("perArchitecture", "      dependsOn: [widgets]\n      timeout: 3m\n", {
      "widgets/a-crd.yaml": lab.WIDGETS_CRD,
      "widgets/b-app.yaml": lab.documents(
        lab.WIDGETS.namespace,
        lab.WIDGETS.deployment,
        lab.WIDGETS.settings(2),
        lab.WIDGETS.first,
      ),
      ...lab.controllerChart({ "deployment.yaml": lab.controllerDeployment({ env: lab.NICO_API_KEY_ENV }) }),
    }),
  );

  // The tree, its artifacts pushed by digest and signed.
  signingKey = newKey();
  otherKey = newKey();
  emitted = await emitSignedTree(fixture, API_KEY, join(work, "tree"), repository);
  const client = new OciClient({ plainHttp: true });
  await pushFluxArtifacts(client, { repository, artifacts: emitted.artifacts, signingKeyPem: signingKey });

  // Flux's CRDs and namespace, the verification key and the operator's Secrets; the stand-ins; the controllers.
  await fixture.engineCrds("flux");
  await cosignKeySecret("nvke-artifact-keys", signingKey);
  await kubectlOn(
    admin,
    ["apply", "--filename=-"],
    JSON.stringify({ kind: "List", apiVersion: "v1", items: operatorSecrets(API_KEY) }),
  );
  standIns.push(startControllerStandIn(admin));
  nicoProviders.push(nicoStandIn(admin));
  // What another kustomize-controller's build in flight looks like in the machine's /tmp: a
  // controller started on a shared /tmp removes it (see the last test).
  canary = await mkdtemp(join(tmpdir(), "kustomization-"));
  flux = await startFluxControllers({ kubeconfig: admin, requeueDependency: "2s" });

  // The same inputs installed on an identical site: a second control plane of this file's, its Nodes alike.
  installed = await startControlPlane({ binDir: fixture.binDir });
  standIns.push(startControllerStandIn(installed.adminKubeconfigPath));
  nicoProviders.push(nicoStandIn(installed.adminKubeconfigPath));
  for (const name of ["site-node-1", "site-node-2"]) {
    await kubectlOn(
      installed.adminKubeconfigPath,
      ["apply", "--filename=-"],
      JSON.stringify({ apiVersion: "v1", kind: "Node", metadata: { name, labels: { "kubernetes.io/arch": "arm64" } } }),
    );
  }
  await install({
    inputs: fixture.inputs(
      { NVKE_NICO_API_KEY: API_KEY },
      { kubeconfig: installed.adminKubeconfigPath, workDir: join(work, "install-state") },
    ),
    runner: createExecaRunner(),
    dryRun: false,
  });
}, 600_000);

afterAll(async () => {
  if (canary !== undefined) await rm(canary, { recursive: true, force: true });
  await flux?.stop();
  for (const standIn of standIns) await standIn.stop();
  for (const provider of nicoProviders) await provider.stop();
  await installed?.stop();
  await registry?.stop();
  await fixture?.cleanup();
});

/** Kinds compared, and the namespaces whose objects are the product's (the rest is the API server's own). */
const COMPARED = [
  "namespaces",
  "deployments.apps",
  "configmaps",
  "services",
  "serviceaccounts",
  "roles.rbac.authorization.k8s.io",
  "rolebindings.rbac.authorization.k8s.io",
  "clusterroles.rbac.authorization.k8s.io",
  "clusterrolebindings.rbac.authorization.k8s.io",
  "customresourcedefinitions.apiextensions.k8s.io",
  "storageclasses.storage.k8s.io",
  "networkpolicies.networking.k8s.io",
  "nicoidentities.infrastructure.cluster.x-k8s.io",
  "widgets.example.test",
];
const SYSTEM_NAMESPACES = new Set(["default", "kube-system", "kube-public", "kube-node-lease", "flux-system"]);

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  provisioner?: string;
  rules?: unknown;
  subjects?: unknown;
  roleRef?: unknown;
}

/** Every product object on a site: `Kind/namespace/name` → its key fields. */
async function siteObjects(kubeconfig: string): Promise<Map<string, unknown>> {
  const objects = new Map<string, unknown>();
  const list = await jsonOn(kubeconfig, "get", COMPARED.join(","), "--all-namespaces");
  for (const o of list.items as Obj[]) {
    const namespace = o.metadata.namespace ?? "";
    if (SYSTEM_NAMESPACES.has(namespace) || (o.kind === "Namespace" && SYSTEM_NAMESPACES.has(o.metadata.name))) {
      continue;
    }
    if (o.metadata.name.startsWith("system:") || o.metadata.name === "kube-root-ca.crt") continue;
    if (o.kind === "ServiceAccount" && o.metadata.name === "default") continue;
    if (o.kind === "CustomResourceDefinition" && o.metadata.name.endsWith(".fluxcd.io")) continue;
    if (o.kind === "ClusterRole" && o.metadata.name.match(/^(admin|edit|view|cluster-admin)$/)) continue;
    if (o.kind === "ClusterRoleBinding" && o.metadata.name === "cluster-admin") continue;
    objects.set(`${o.kind}/${namespace}/${o.metadata.name}`, keyFields(o));
  }
  return objects;
}

function keyFields(o: Obj): unknown {
  switch (o.kind) {
    case "Deployment": {
      const spec = o.spec as { replicas?: number; template: { spec: Record<string, unknown> } };
      const pod = spec.template.spec as {
        nodeSelector?: unknown;
        volumes?: unknown;
        containers: Array<{ name: string; image: string; env?: unknown; volumeMounts?: unknown }>;
      };
      return {
        replicas: spec.replicas,
        nodeSelector: pod.nodeSelector,
        volumes: pod.volumes,
        containers: pod.containers.map((c) => [c.name, c.image, c.env, c.volumeMounts]),
      };
    }
    case "ConfigMap":
      return o.data;
    case "NetworkPolicy":
    case "NicoIdentity":
    case "Widget":
      return o.spec ?? null;
    case "StorageClass":
      return o.provisioner;
    case "CustomResourceDefinition":
      return (o.spec as { versions: Array<{ name: string; served: boolean; storage: boolean }> }).versions.map((v) => [
        v.name,
        v.served,
        v.storage,
      ]);
    case "ClusterRole":
    case "Role":
      return o.rules ?? null;
    case "ClusterRoleBinding":
    case "RoleBinding":
      return [o.roleRef, o.subjects];
    default:
      return null;
  }
}

describe("install --emit flux, reconciled by Flux's source-controller and kustomize-controller", () => {
  test("every OCIRepository verifies its signed artifact and every Kustomization becomes Ready", async () => {
    const started = performance.now();
    await kubectlOn(fixture.admin, ["apply", "--server-side", "--kustomize", join(fixture.work, "tree", "flux")]);
    await waitFor(
      "ocirepositories.source.toolkit.fluxcd.io",
      (items) => items.every((i) => ready(i)?.status === "True"),
      120_000,
    );
    const sources = (
      await jsonOn(fixture.admin, "get", "ocirepositories.source.toolkit.fluxcd.io", "-n", "flux-system")
    ).items as Array<{
      metadata: { name: string };
      status: { conditions: Condition[]; artifact: { digest: string; revision: string } };
    }>;
    expect(sources).toHaveLength(emitted.items.length);
    for (const source of sources) {
      expect(source.status.conditions.find((c) => c.type === "SourceVerified")).toMatchObject({ status: "True" });
      const artifact = emitted.artifacts.find((a) => `nvke-${a.item}` === source.metadata.name);
      expect(source.status.artifact.revision).toBe(artifact?.digest);
    }
    await waitFor(
      "kustomizations.kustomize.toolkit.fluxcd.io",
      (items) => items.length === emitted.items.length && items.every((i) => ready(i)?.status === "True"),
      300_000,
    );
    fluxSeconds = (performance.now() - started) / 1000;
    expect(fluxSeconds).toBeGreaterThan(0);
  }, 480_000);

  test("the site reached through Flux holds the same objects, with the same key fields, as nvkectl install's", async () => {
    const viaFlux = await siteObjects(fixture.admin);
    const viaInstall = await siteObjects(installed.adminKubeconfigPath);
    // What only the install makes, and why: clusterctl init's inventory (its Provider CRD;
    // Flux has clusterctl's generated components, not its inventory), helm's release Secret
    // and the install record are the install's own bookkeeping (not compared kinds, but the
    // inventory CRD is one).
    const installOnly = ["CustomResourceDefinition//providers.clusterctl.cluster.x-k8s.io"];
    const onlyInstall = [...viaInstall.keys()].filter((k) => !viaFlux.has(k));
    const onlyFlux = [...viaFlux.keys()].filter((k) => !viaInstall.has(k));
    expect(onlyInstall).toEqual(installOnly);
    expect(onlyFlux).toEqual([]);
    const differing = [...viaFlux].filter(
      ([key, value]) => JSON.stringify(viaInstall.get(key)) !== JSON.stringify(value),
    );
    expect(differing).toEqual([]);
    // The comparison covers what matters: the SPIRE patch, the arm64 choice, the policy, the NicoIdentity.
    expect(viaFlux.size).toBeGreaterThan(40);
    const capi = viaFlux.get("Deployment/capi-system/capi-controller-manager") as { volumes: unknown[] };
    expect(capi.volumes).toContainEqual({
      name: "spire-agent-socket",
      csi: { driver: "csi.spiffe.io", readOnly: true },
    });
    const controller = viaFlux.get("Deployment/nke-controller/nvke-controller") as { nodeSelector: unknown };
    expect(controller.nodeSelector).toEqual({ "kubernetes.io/arch": "arm64" });
    expect(viaFlux.has("NetworkPolicy/nke-controller/nvke-controller-api-clients")).toBe(true);
    expect(viaFlux.has("NicoIdentity/nico-system/default")).toBe(true);
    expect(viaFlux.has("Widget/widgets/first")).toBe(true);
  }, 120_000);

  test("an artifact signed by another key is refused by source-controller's verification; its key passes", async () => {
    const refused = `${repository}/refused`;
    const artifact = emitted.artifacts.find((a) => a.item === "widgets");
    if (artifact === undefined) throw new Error("no widgets artifact");
    const client = new OciClient({ plainHttp: true });
    await pushFluxArtifacts(client, {
      repository: refused,
      artifacts: [{ ...artifact, item: "widgets" }],
      signingKeyPem: otherKey,
    });
    const source = (secret: string) => ({
      apiVersion: "source.toolkit.fluxcd.io/v1",
      kind: "OCIRepository",
      metadata: { name: "other-signer", namespace: "flux-system" },
      spec: {
        interval: "10m",
        url: `${refused}/widgets`,
        ref: { digest: artifact.digest },
        insecure: true,
        verify: { provider: "cosign", secretRef: { name: secret } },
      },
    });
    await kubectlOn(
      fixture.admin,
      ["apply", "--server-side", "--filename=-"],
      JSON.stringify(source("nvke-artifact-keys")),
    );
    // Until source-controller has finished the reconcile, Ready is Unknown (Reconciling) even
    // after SourceVerified is False: wait for both to settle.
    const read = () => jsonOn(fixture.admin, "get", "ocirepository", "other-signer", "-n", "flux-system");
    const verifiedOf = (object: { status?: { conditions?: Condition[] } }) =>
      object.status?.conditions?.find((c) => c.type === "SourceVerified");
    const deadline = Date.now() + 60_000;
    let object = await read();
    while ((verifiedOf(object)?.status !== "False" || ready(object)?.status === "Unknown") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      object = await read();
    }
    const verified = verifiedOf(object);
    expect(verified).toMatchObject({ status: "False", reason: "VerificationError" });
    expect(verified?.message).toMatch(/no matching signatures|failed to verify signature|invalid signature/i);
    expect(ready(object)?.status).toBe("False");
    expect(object.status?.artifact).toBeUndefined();

    // With the other key's public key, the same artifact passes.
    await cosignKeySecret("other-signer-keys", otherKey);
    await kubectlOn(
      fixture.admin,
      ["apply", "--server-side", "--filename=-"],
      JSON.stringify(source("other-signer-keys")),
    );
    await waitFor(
      "ocirepositories.source.toolkit.fluxcd.io",
      (items) => items.some((i) => i.metadata.name === "other-signer" && ready(i)?.status === "True"),
      60_000,
    );
  }, 180_000);

  test("the controllers keep to a /tmp of their own: another controller's build directory in the machine's /tmp is left alone", async () => {
    // kustomize-controller removes every kustomization-* directory in its os.TempDir() when it
    // starts (main.go: ListStaleTempDirs); upstream each runs with an emptyDir at /tmp. On a
    // shared /tmp it removed a build in flight of another test's controller, and that
    // Kustomization failed ("evalsymlink failure on '/tmp/kustomization-…'").
    await expect(access(canary ?? "")).resolves.toBeUndefined();
  });
});
