import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { crdEstablishedWaitArgs } from "@nodekit/kube";
import { createExecaRunner, Redactor } from "@nodekit/process";
import { tempDir } from "@nodekit/test-utils";
import { binaries } from "@nodekit/testenv";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { emitFluxTree, type InstallInputs } from "../src/services/install.ts";

// What the install integration tests (install.int, install-release.int) set up alike: a
// control plane of the file's own, a work dir, helm and clusterctl on PATH, Nodes of one
// architecture, the site spec, stack config and deploy path, and the install's inputs.

/** The Cluster API block of every test deploy path: its versions, and the nico provider. */
const CLUSTER_API = `  clusterAPI:
    version: v1.11.7
    certManager: v1.19.1
    infrastructure:
      - name: nico
        version: v0.3.0
        controller: nico-system/nico-controller-manager
`;

export const siteSpecYaml = (name: string, host: string) => `apiVersion: nvke.io/v1alpha1
kind: SiteSpec
metadata:
  name: ${name}
spec:
  hosts:
    - name: ${host}
      ip: 127.0.0.1
`;

/** A stack config whose nico.organizationId is on line 5; `extra` is appended before clusterAPI. */
export const stackConfigYaml = (organizationId: string, extra = "") => `apiVersion: nvke.io/v1alpha1
kind: StackConfig
nico:
  endpoint: https://nico.example.test/api
  organizationId: ${organizationId}
  apiName: nvke
${extra}clusterAPI:
  providerRepository: ./providers
`;

/** nvke-deploy.yaml with the Cluster API block and these items (YAML, indented as list entries). */
export const deployPathYaml = (name: string, items: string) => `apiVersion: deploy.nodekit.dev/v1alpha1
kind: DeployPath
metadata:
  name: ${name}
spec:
${CLUSTER_API}  items:
${items}`;

/** The deploy path item of the controller chart at path/controller, with the stack's values. */
export const CONTROLLER_ITEM = `    - name: controller
      namespace: nke-controller
      stackValues: true
`;

/**
 * The three inputs at their usual places (sitespec.yaml, stack.yaml, path/nvke-deploy.yaml): the
 * site `site` with one host, the stack for `organizationId` (with `stackExtra`), the deploy path
 * `path` with these items.
 */
export const siteFiles = (inputs: {
  site: [name: string, host: string];
  organizationId: string;
  stackExtra?: string;
  path: [name: string, items: string];
}): Record<string, string> => ({
  "sitespec.yaml": siteSpecYaml(...inputs.site),
  "stack.yaml": stackConfigYaml(inputs.organizationId, inputs.stackExtra),
  "path/nvke-deploy.yaml": deployPathYaml(...inputs.path),
});

/** The flags naming the three inputs of `inputs`, as install, upgrade and uninstall take them. */
export const inputArgs = (inputs: Pick<InstallInputs, "siteSpec" | "stackConfig" | "deployPath">) => [
  "--sitespec",
  inputs.siteSpec,
  "--stack-config",
  inputs.stackConfig,
  "--deploy-path",
  inputs.deployPath,
];

export interface InstallFixture {
  /** The file's scratch directory: the inputs are written here. */
  readonly work: string;
  /** The admin kubeconfig of the file's own control plane. */
  readonly admin: string;
  /** kube-apiserver, etcd, helm and clusterctl (also put first on PATH until cleanup()). */
  readonly binDir: string;
  /** Writes files under `work` (parents created). */
  write(files: Record<string, string>): Promise<void>;
  /** kubectl as admin; its stdout. */
  kubectl(...args: string[]): Promise<string>;
  /** kubectl as admin with `object` as JSON on its stdin (what `-f -` reads); its stdout. */
  kubectlWith(object: object, ...args: string[]): Promise<string>;
  /** kubectl … --output=json as admin, parsed. */
  json(...args: string[]): Promise<ReturnType<typeof JSON.parse>>;
  /**
   * The GitOps engine's CRDs applied and established, and its namespace: Flux's (built by
   * tooling/flux-testbin) and flux-system, or Argo CD's (tooling/argocd-crds) and argocd.
   */
  engineCrds(engine: "flux" | "argocd"): Promise<void>;
  /** kubectl apply --server-side --dry-run=server of `object`: the API server validates it (rejects with kubectl's error). */
  serverDryRun(object: object): Promise<string>;
  /** Creates (or updates) Nodes labelled with this architecture. */
  addNodes(arch: string, ...names: string[]): Promise<void>;
  /** The install's inputs for the files at their usual places (sitespec.yaml, stack.yaml, path/, state/). */
  inputs(env: Record<string, string>, extra?: Partial<InstallInputs>): InstallInputs;
  /** Restores PATH and removes `work`. */
  cleanup(): Promise<void>;
}

/** Sets up an install test file: call once in beforeAll, and cleanup() in afterAll. */
export async function installFixture(prefix: string): Promise<InstallFixture> {
  const plane = await useControlPlane({ dedicated: true });
  const admin = plane.adminKubeconfigPath;
  const savedPath = process.env.PATH;
  process.env.PATH = `${plane.binDir}:${process.env.PATH}`;
  const { path: work, cleanup } = await tempDir(prefix);
  const kubectl = async (...args: string[]) =>
    (await createExecaRunner().run({ command: "kubectl", args: ["--kubeconfig", admin, ...args] })).stdout;
  const kubectlWith = async (object: object, ...args: string[]) =>
    (
      await createExecaRunner().run({
        command: "kubectl",
        args: ["--kubeconfig", admin, ...args],
        input: JSON.stringify(object),
      })
    ).stdout;
  return {
    work,
    admin,
    binDir: plane.binDir,
    async write(files) {
      for (const [name, text] of Object.entries(files)) {
        await mkdir(dirname(join(work, name)), { recursive: true });
        await writeFile(join(work, name), text);
      }
    },
    kubectl,
    kubectlWith,
    json: async (...args) => JSON.parse(await kubectl(...args, "--output=json")),
    async engineCrds(engine) {
      const crds = join(await binaries(engine), "crds");
      await kubectl("apply", "--server-side", "--filename", crds);
      for (const args of crdEstablishedWaitArgs(["--filename", crds], "60s")) await kubectl(...args);
      await kubectl("create", "namespace", engine === "flux" ? "flux-system" : "argocd");
    },
    serverDryRun: (object) => kubectlWith(object, "apply", "--server-side", "--dry-run=server", "--filename", "-"),
    async addNodes(arch, ...names) {
      for (const name of names) {
        const node = { apiVersion: "v1", kind: "Node", metadata: { name, labels: { "kubernetes.io/arch": arch } } };
        await kubectlWith(node, "apply", "-f", "-");
      }
    },
    inputs: (env, extra = {}) => ({
      siteSpec: join(work, "sitespec.yaml"),
      stackConfig: join(work, "stack.yaml"),
      deployPath: join(work, "path"),
      kubeconfig: admin,
      workDir: join(work, "state"),
      env: { ...process.env, ...env },
      redactor: new Redactor(),
      ...extra,
    }),
    async cleanup() {
      process.env.PATH = savedPath;
      await cleanup();
    },
  };
}

/**
 * `install --emit flux` of the fixture's inputs (the NICo API key `apiKey`) into `dir`, for
 * `repository` over plain HTTP, its artifacts verified with the cosign keys of the Secret
 * nvke-artifact-keys.
 */
export const emitSignedTree = (fixture: InstallFixture, apiKey: string, dir: string, repository: string) =>
  emitFluxTree({
    inputs: fixture.inputs({ NVKE_NICO_API_KEY: apiKey }),
    runner: createExecaRunner(),
    dir,
    dryRun: false,
    repository,
    verify: { provider: "cosign", secret: "nvke-artifact-keys" },
    insecure: true,
  });
