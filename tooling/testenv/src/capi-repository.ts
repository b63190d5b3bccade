import { execFile } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { dump, loadAll } from "js-yaml";
import { buildOnce, cacheRoot } from "./cache.ts";

export { buildOnce, cacheRoot };

// A clusterctl provider repository on disk, for `clusterctl init` fully offline in tests:
// the real Cluster API components, built with `kubectl kustomize` from the Cluster API
// module in the Go module cache (the one tooling/k8s-testbin builds clusterctl from), with
// every admission and conversion webhook stripped (network safety: the test API server
// must never dial a Service), and cert-manager's Issuer and Certificate CRDs, which is all
// clusterctl's cert-manager check uses.

const run = promisify(execFile);

/** The Cluster API version tooling/k8s-testbin builds clusterctl at. */
export const CAPI_VERSION = "v1.11.7";
export const CERT_MANAGER_VERSION = "v1.19.1";

export interface TestInfrastructureProvider {
  name: string;
  version: string;
  /** Its controller Deployment. */
  namespace: string;
  deployment: string;
  /**
   * Its CRDs (group infrastructure.cluster.x-k8s.io, version v1beta1, each with a status
   * subresource), as `Kind` → plural. Default: `<Name>Cluster` alone.
   */
  crds?: Readonly<Record<string, string>>;
}

/**
 * A stand-in for the NICo infrastructure provider's components at the version deploy/nico
 * pins: the four CRDs docs/providers.md (and nvkectl's provider catalogue) lists, and its
 * controller Deployment, which runs nothing (the NICo provider stand-in checks credentials).
 */
export const NICO_INFRASTRUCTURE = {
  name: "nico",
  version: "v0.3.0",
  namespace: "nico-system",
  deployment: "nico-controller-manager",
  crds: {
    NicoCluster: "nicoclusters",
    NicoMachine: "nicomachines",
    NicoMachineTemplate: "nicomachinetemplates",
    NicoIdentity: "nicoidentities",
  },
} as const satisfies TestInfrastructureProvider;

const STRIPPED_KINDS = new Set([
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
  "APIService",
  "Certificate",
  "Issuer",
]);

type K8sObject = {
  kind?: string;
  metadata?: { name?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
};

/** Components without webhooks: no object that would make the API server dial a Service. */
function stripWebhooks(objects: K8sObject[]): K8sObject[] {
  return objects
    .filter((object) => !STRIPPED_KINDS.has(object.kind ?? ""))
    .map((object) => {
      if (object.kind !== "CustomResourceDefinition") return object;
      const copy = structuredClone(object);
      if (copy.spec) delete copy.spec.conversion;
      if (copy.metadata?.annotations) delete copy.metadata.annotations["cert-manager.io/inject-ca-from"];
      return copy;
    });
}

async function moduleDir(version: string): Promise<string> {
  const { stdout } = await run("go", ["env", "GOMODCACHE"]);
  return join(stdout.trim(), "sigs.k8s.io", `cluster-api@${version}`);
}

async function kustomize(dir: string): Promise<K8sObject[]> {
  const { stdout } = await run("kubectl", ["kustomize", dir], { maxBuffer: 64 * 1024 * 1024 });
  return (loadAll(stdout) as K8sObject[]).filter((object) => object !== null && object !== undefined);
}

const stream = (objects: object[]) => objects.map((object) => dump(object, { lineWidth: -1 })).join("---\n");

/**
 * A CustomResourceDefinition that takes any object of its kind (with a status subresource,
 * unless `statusSubresource: false`: then `status` is written by a create like any field):
 * what a stand-in provider installs, where only the names matter.
 */
export function looseCrd(
  plural: string,
  kind: string,
  group: string,
  version: string,
  options: { scope?: "Namespaced" | "Cluster"; labels?: Record<string, string>; statusSubresource?: boolean } = {},
): object {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}`, ...(options.labels === undefined ? {} : { labels: options.labels }) },
    spec: {
      group,
      scope: options.scope ?? "Namespaced",
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          ...(options.statusSubresource === false ? {} : { subresources: { status: {} } }),
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

/**
 * The Cluster API components at `CAPI_VERSION` (`kubectl kustomize` of each provider's
 * config, webhooks stripped), built once into the nodekit cache and reused: each build took
 * ≈ 3 s of CPU (kustomize, then js-yaml over 3 MB), and eight test files build a repository.
 * Bump the `-r` suffix when what is built changes (stripWebhooks, the providers).
 */
function builtComponents(providers: Array<{ file: string; source: string }>): Promise<string> {
  return buildOnce(join(cacheRoot(), "testenv", `capi-components-${CAPI_VERSION}-r1`), async (tmp) => {
    await Promise.all(
      providers.map(async (provider) =>
        writeFile(join(tmp, provider.file), stream(stripWebhooks(await kustomize(provider.source)))),
      ),
    );
  });
}

/**
 * Lays out `{provider-label}/{version}/{components, metadata.yaml}` for core, kubeadm
 * bootstrap and kubeadm control-plane at `CAPI_VERSION`, `cert-manager/{version}/cert-manager.yaml`,
 * and, when given, a small infrastructure provider (its CRDs and its controller Deployment).
 */
export async function buildProviderRepository(
  dir: string,
  options: { infrastructure?: TestInfrastructureProvider } = {},
): Promise<string> {
  const capi = await moduleDir(CAPI_VERSION);
  const providers = [
    { label: "cluster-api", file: "core-components.yaml", source: join(capi, "config", "default") },
    {
      label: "bootstrap-kubeadm",
      file: "bootstrap-components.yaml",
      source: join(capi, "bootstrap", "kubeadm", "config", "default"),
    },
    {
      label: "control-plane-kubeadm",
      file: "control-plane-components.yaml",
      source: join(capi, "controlplane", "kubeadm", "config", "default"),
    },
  ];
  const built = await builtComponents(providers);
  await Promise.all(
    providers.map(async (provider) => {
      const target = join(dir, provider.label, CAPI_VERSION);
      await mkdir(target, { recursive: true });
      await copyFile(join(built, provider.file), join(target, provider.file));
      await copyFile(join(capi, "metadata.yaml"), join(target, "metadata.yaml"));
    }),
  );
  const certManager = join(dir, "cert-manager", CERT_MANAGER_VERSION);
  await mkdir(certManager, { recursive: true });
  await writeFile(
    join(certManager, "cert-manager.yaml"),
    stream([
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "cert-manager" } },
      looseCrd("issuers", "Issuer", "cert-manager.io", "v1"),
      looseCrd("clusterissuers", "ClusterIssuer", "cert-manager.io", "v1", { scope: "Cluster" }),
      looseCrd("certificates", "Certificate", "cert-manager.io", "v1"),
    ]),
  );
  const infra = options.infrastructure;
  if (infra !== undefined) {
    const target = join(dir, `infrastructure-${infra.name}`, infra.version);
    await mkdir(target, { recursive: true });
    const [major, minor] = infra.version.replace(/^v/, "").split(".").map(Number);
    await writeFile(
      join(target, "metadata.yaml"),
      dump({
        apiVersion: "clusterctl.cluster.x-k8s.io/v1alpha3",
        kind: "Metadata",
        releaseSeries: [{ major, minor, contract: "v1beta2" }],
      }),
    );
    const labels = { "app.kubernetes.io/name": `${infra.name}-controller` };
    await writeFile(
      join(target, "infrastructure-components.yaml"),
      stream([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: infra.namespace } },
        ...Object.entries(
          infra.crds ?? { [`${infra.name[0]?.toUpperCase()}${infra.name.slice(1)}Cluster`]: `${infra.name}clusters` },
        ).map(([kind, plural]) =>
          looseCrd(plural, kind, "infrastructure.cluster.x-k8s.io", "v1beta1", {
            labels: { "cluster.x-k8s.io/v1beta2": "v1beta1" },
          }),
        ),
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: infra.deployment, namespace: infra.namespace, labels },
          spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: {
                containers: [{ name: "manager", image: `registry.invalid/${infra.name}-controller:${infra.version}` }],
              },
            },
          },
        },
      ]),
    );
  }
  return dir;
}
