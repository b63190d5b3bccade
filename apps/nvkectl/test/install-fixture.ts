import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createExecaRunner, Redactor } from "@nodekit/process";
import { tempDir } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import type { InstallInputs } from "../src/services/install.ts";

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
  /** kubectl … --output=json as admin, parsed. */
  json(...args: string[]): Promise<ReturnType<typeof JSON.parse>>;
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
    json: async (...args) => JSON.parse(await kubectl(...args, "--output=json")),
    async addNodes(arch, ...names) {
      for (const name of names) {
        await createExecaRunner().run({
          command: "kubectl",
          args: ["--kubeconfig", admin, "apply", "-f", "-"],
          input: JSON.stringify({
            apiVersion: "v1",
            kind: "Node",
            metadata: { name, labels: { "kubernetes.io/arch": arch } },
          }),
        });
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
 * The site the `--emit` tests render (flux-emit, argocd-emit): host site-node-1, organization
 * org-42 with client networks, the manifests item `widgets` and the controller chart after it
 * (the stack's values, a 7m timeout), each with its files.
 */
export const emitSiteFiles = (): Record<string, string> => ({
  ...siteFiles({
    site: ["lab", "site-node-1"],
    organizationId: "org-42",
    stackExtra: "images:\n  profiles: registry.example.test/profiles:v1\nclientNetworks: [192.0.2.0/24]\n",
    path: [
      "test",
      `    - name: widgets
      namespace: widgets
    - name: controller
      namespace: nke-controller
      stackValues: true
      dependsOn: [widgets]
      timeout: 7m
`,
    ],
  }),
  "path/widgets/app.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: widget-settings
data: { size: "2" }
`,
  "path/controller/chart-pin.yaml": "chart: ./chart\nversion: 0.1.0\n",
  "path/controller/values.yaml": "replicas: 1\n",
  "path/controller/chart/Chart.yaml": "apiVersion: v2\nname: controller\nversion: 0.1.0\n",
  "path/controller/chart/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nvke-controller
spec:
  replicas: {{ .Values.replicas }}
  selector: { matchLabels: { app.kubernetes.io/name: nvke-controller } }
  template:
    metadata: { labels: { app.kubernetes.io/name: nvke-controller } }
    spec:
      nodeSelector: {{ toJson .Values.nodeSelector }}
      containers:
        - name: controller
          image: registry.invalid/controller:1
          env:
            - { name: PROFILES, value: {{ .Values.images.profiles | quote }} }
            - name: NICO_API_KEY
              valueFrom: { secretKeyRef: { name: {{ .Values.nico.credentialsSecret }}, key: apiKey } }
`,
});
