import { CONTROLLER_ITEM, deployPathYaml, siteSpecYaml, stackConfigYaml } from "./install-fixture.ts";

// The site the install files (install, uninstall, flux-emit and flux-reconcile .int) write, and
// its parts: a widgets item (a CRD, a Namespace, a Deployment, a ConfigMap, a Widget) and the
// controller chart, each file taking the parts it needs. Import it as `lab`.

/** The widgets item (its manifests under path/widgets) and the controller item, the start of every lab site's items. */
const ITEMS = `    - name: widgets
      namespace: widgets
${CONTROLLER_ITEM}`;

/** The stack's images and client network: one profile image, or one per architecture. */
const STACK = {
  single: "images:\n  profiles: registry.example.test/profiles:v1\nclientNetworks: [192.0.2.0/24]\n",
  perArchitecture: `images:
  profiles:
    amd64: registry.example.test/profiles:v1-amd64
    arm64: registry.example.test/profiles:v1-arm64
clientNetworks: [192.0.2.0/24]
`,
};

/**
 * The site the install files write: "lab" with the host site-node-1, the stack for org-42 with
 * `profiles`, and the deploy path "test" with the widgets and controller items (`itemsExtra`
 * appended: the controller item's further fields, further items) and `pathFiles` under path/.
 */
export const files = (
  profiles: keyof typeof STACK,
  itemsExtra: string,
  pathFiles: Record<string, string>,
): Record<string, string> => ({
  "sitespec.yaml": siteSpecYaml("lab", "site-node-1"),
  "stack.yaml": stackConfigYaml("org-42", STACK[profiles]),
  "path/nvke-deploy.yaml": deployPathYaml("test", ITEMS + itemsExtra),
  ...Object.fromEntries(Object.entries(pathFiles).map(([name, text]) => [`path/${name}`, text])),
});

/** The widgets item's CustomResourceDefinition (widgets.example.test, kind Widget). */
export const WIDGETS_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.test
spec:
  group: example.test
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
`;

/** The widgets item's objects, one YAML document each. */
export const WIDGETS = {
  namespace: `apiVersion: v1
kind: Namespace
metadata:
  name: widgets
`,
  deployment: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: widget-controller
spec:
  replicas: 2
  selector: { matchLabels: { app: widgets } }
  template:
    metadata: { labels: { app: widgets } }
    spec:
      containers: [{ name: manager, image: "registry.invalid/widgets:1" }]
`,
  settings: (size: number) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: widget-settings
data: { size: "${size}" }
`,
  first: `apiVersion: example.test/v1
kind: Widget
metadata:
  name: first
`,
};

/** YAML documents as one multi-document file. */
export const documents = (...texts: string[]) => texts.join("---\n");

/** The controller pod's spec: the stack's node selector, and the environment PROFILES and `more` entries. */
const controllerPod = (more: string) => `      nodeSelector: {{ toJson .Values.nodeSelector }}
      containers:
        - name: controller
          image: registry.invalid/controller:1
          env:
            - { name: PROFILES, value: {{ .Values.images.profiles | quote }} }
${more}`;

/** The controller pod's NICO_API_KEY, from the stack's credentials Secret. */
export const NICO_API_KEY_ENV = `            - name: NICO_API_KEY
              valueFrom: { secretKeyRef: { name: {{ .Values.nico.credentialsSecret }}, key: apiKey } }
`;

/**
 * The controller chart's Deployment nvke-controller (labelled with its name unless `labelled` is
 * false): node selector, PROFILES and `env` (entries indented as the env list's), or this `podSpec`.
 */
export const controllerDeployment = (
  pod: { env: string } | { podSpec: string },
  { labelled = true } = {},
) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nvke-controller
${labelled ? "  labels: { app.kubernetes.io/name: nvke-controller }\n" : ""}spec:
  replicas: {{ .Values.replicas }}
  selector: { matchLabels: { app.kubernetes.io/name: nvke-controller } }
  template:
    metadata: { labels: { app.kubernetes.io/name: nvke-controller } }
    spec:
${"env" in pod ? controllerPod(pod.env) : pod.podSpec}`;

/** The controller item's files (path/controller): its chart pin, values and a chart of these templates. */
export const controllerChart = (templates: Record<string, string>): Record<string, string> => ({
  "controller/chart-pin.yaml": "chart: ./chart\nversion: 0.1.0\n",
  "controller/values.yaml": "replicas: 1\n",
  "controller/chart/Chart.yaml": "apiVersion: v2\nname: controller\nversion: 0.1.0\n",
  ...Object.fromEntries(Object.entries(templates).map(([name, text]) => [`controller/chart/templates/${name}`, text])),
});

/**
 * The site the `--emit` tests render (flux-emit, argocd-emit): the single-profile lab site whose
 * controller item comes after widgets with a 7m timeout, widget-settings of size 2, and the
 * controller chart whose Deployment (unlabelled) reads NICO_API_KEY from the stack's Secret.
 */
export const emitFiles = (): Record<string, string> =>
  files("single", "      dependsOn: [widgets]\n      timeout: 7m\n", {
    "widgets/app.yaml": WIDGETS.settings(2),
    ...controllerChart({
      "deployment.yaml": controllerDeployment({ env: NICO_API_KEY_ENV }, { labelled: false }),
    }),
  });
