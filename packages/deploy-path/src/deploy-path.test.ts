import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { formatProblem } from "@nodekit/errors";
import { formatPlan, planCallLines } from "@nodekit/plan";
import { tempDir, userErrorOf } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import { loadDeployPath, planDeployPath, readDeployPath } from "./index.ts";

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
  cleanups = [];
});

/** Writes `files` (path → text) under a fresh temp dir and returns it. */
async function tree(files: Record<string, string>): Promise<string> {
  const { path, cleanup } = await tempDir("deploy-path-");
  cleanups.push(cleanup);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(path, name)), { recursive: true });
    await writeFile(join(path, name), text);
  }
  return path;
}

const INDEX = `apiVersion: deploy.nodekit.dev/v1alpha1
kind: DeployPath
metadata:
  name: lab
spec:
  items:
    - name: crds
    - name: spire
      namespace: spire-system
      dependsOn: [crds]
    - name: controller
      namespace: nke-controller
      timeout: 2m
      stackValues: true
`;

const GOOD: Record<string, string> = {
  "nvke-deploy.yaml": INDEX,
  "crds/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
`,
  "crds/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: widget-controller
  namespace: widgets
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: widget-config
`,
  "spire/chart-pin.yaml": "repository: https://charts.example.test/spire\nchart: spire\nversion: 0.26.1\n",
  "spire/values.yaml": "global:\n  spire:\n    trustDomain: lab.example\n",
  "controller/chart-pin.yaml": "chart: ./chart\nversion: 0.1.0\n",
  "controller/chart/Chart.yaml": "apiVersion: v2\nname: controller\nversion: 0.1.0\n",
  "controller/overlay.yaml": "replicas: 1\n",
};

const target = { kubeconfig: "/site/lab.kubeconfig" };
const helmEnv = { HOME: "/work/home" };

describe("a deploy path that validates", () => {
  test("plans every call in order: applies, waits and helm upgrades", async () => {
    const dir = await tree(GOOD);
    const path = await readDeployPath(dir);
    expect(path.items.map((item) => [item.name, item.kind])).toEqual([
      ["crds", "manifests"],
      ["spire", "chart"],
      ["controller", "chart"],
    ]);
    const plan = planDeployPath(path, { target, helmEnv, extraValues: { controller: ["/work/controller.yaml"] } });
    const k = "kubectl --kubeconfig /site/lab.kubeconfig --request-timeout=30s";
    expect(planCallLines(plan)).toEqual([
      `${k} apply --server-side --field-manager=nodekit-deploy --force-conflicts --filename ${dir}/crds/crd.yaml`,
      `${k} wait '--for=jsonpath={.status.conditions[0].type}' customresourcedefinition/widgets.example.com --timeout=5m`,
      `${k} wait --for=condition=Established customresourcedefinition/widgets.example.com --timeout=5m`,
      `${k} apply --server-side --field-manager=nodekit-deploy --force-conflicts --filename ${dir}/crds/deploy.yaml`,
      `${k} rollout status deployment/widget-controller --namespace widgets --timeout=5m`,
      `HOME=/work/home helm upgrade --install spire spire --repo https://charts.example.test/spire --version 0.26.1 --namespace spire-system --create-namespace --values ${dir}/spire/values.yaml --wait --timeout 5m --kubeconfig /site/lab.kubeconfig`,
      `HOME=/work/home helm upgrade --install controller ${dir}/controller/chart --namespace nke-controller --create-namespace --values ${dir}/controller/overlay.yaml --values /work/controller.yaml --wait --timeout 2m --kubeconfig /site/lab.kubeconfig`,
    ]);
    expect(formatPlan(plan)).toContain("# [2/3] spire: chart spire 0.26.1 as release spire");
    const helmStep = plan.items[2]?.steps[0];
    expect(helmStep?.kind === "exec" && helmStep.call.reads).toEqual([
      `${dir}/controller/chart`,
      `${dir}/controller/overlay.yaml`,
      "/work/controller.yaml",
    ]);
  });

  test("an item's CRDs are waited for together: one pair of kubectl waits, however many CRDs", async () => {
    const gadgets = GOOD["crds/crd.yaml"]?.replaceAll("widgets", "gadgets");
    const dir = await tree({ ...GOOD, "crds/crd.yaml": `${GOOD["crds/crd.yaml"]}---\n${gadgets}` });
    const plan = planDeployPath(await readDeployPath(dir), { target, helmEnv });
    const k = "kubectl --kubeconfig /site/lab.kubeconfig --request-timeout=30s";
    const crds = "customresourcedefinition/widgets.example.com customresourcedefinition/gadgets.example.com";
    expect(planCallLines(plan).slice(1, 3)).toEqual([
      `${k} wait '--for=jsonpath={.status.conditions[0].type}' ${crds} --timeout=5m`,
      `${k} wait --for=condition=Established ${crds} --timeout=5m`,
    ]);
  });

  test("an OCI pin with a digest is pulled by digest", async () => {
    const dir = await tree({
      "nvke-deploy.yaml": INDEX.replace(/ {4}- name: crds\n/, "").replace("dependsOn: [crds]", "dependsOn: []"),
      "spire/chart-pin.yaml": `repository: oci://registry.example.test/charts\nchart: spire\nversion: 0.26.1\ndigest: sha256:${"a".repeat(64)}\n`,
      "controller/chart-pin.yaml": "chart: ./chart\nversion: 0.1.0\n",
      "controller/chart/Chart.yaml": "apiVersion: v2\nname: controller\nversion: 0.1.0\n",
    });
    const plan = planDeployPath(await readDeployPath(dir), { target, helmEnv });
    expect(planCallLines(plan)[0]).toContain(
      `upgrade --install spire oci://registry.example.test/charts/spire@sha256:${"a".repeat(64)} --version 0.26.1`,
    );
  });
});

describe("every problem of a bad deploy path, in one pass, with file, line and field", () => {
  const problemsOf = async (files: Record<string, string>) => {
    const dir = await tree(files);
    const loaded = await loadDeployPath(dir, { cwd: dir });
    expect(loaded.deployPath).toBeUndefined();
    return loaded.problems.map((problem) => formatProblem(problem).replaceAll(dir, "."));
  };

  test("index problems: unknown key, bad version pin, duplicate name, a dependency that comes later, a missing directory", async () => {
    const problems = await problemsOf({
      ...GOOD,
      "nvke-deploy.yaml": `apiVersion: deploy.nodekit.dev/v1alpha1
kind: DeployPath
metadata:
  name: lab
spec:
  clusterAPI:
    version: one.two
    certManager: v1.19.1
  items:
    - name: crds
      dependsOn: [spire]
      colour: blue
    - name: spire
    - name: spire
    - name: missing
`,
    });
    expect(problems).toEqual([
      './nvke-deploy.yaml:7: field spec.clusterAPI.version: "one.two" is not a semantic version such as 1.2.3 or v1.2.3',
      './nvke-deploy.yaml:11: field spec.items[0].dependsOn[0]: "spire" comes later (spec.items[1]); an item can depend only on items before it',
      "./nvke-deploy.yaml:12: field spec.items[0].colour: is not a known field; the fields here are name, path, namespace, dependsOn, timeout, stackValues",
      './nvke-deploy.yaml:14: field spec.items[2].name: "spire" is a duplicate item name: spec.items[1] already has it',
      "./nvke-deploy.yaml:15: field spec.items[3].name: names the item directory ./missing, which does not exist",
    ]);
  });

  test("item problems: both chart and manifests, a bad chart version, values that are not a mapping, a manifest without a kind", async () => {
    const problems = await problemsOf({
      ...GOOD,
      "crds/deploy.yaml": "apiVersion: v1\nmetadata:\n  name: x\n",
      "spire/chart-pin.yaml": "repository: https://charts.example.test/spire\nchart: spire\nversion: latest\n",
      "spire/values.yaml": "- a\n- b\n",
      "controller/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    });
    expect(problems).toEqual([
      "./controller: is both a chart item (chart-pin.yaml) and a manifests item (extra.yaml); an item holds one or the other: move the manifests to an item of their own",
      "./crds/deploy.yaml:1: field kind: is required: every manifest names its kind",
      './spire/chart-pin.yaml:3: field version: "latest" is not a semantic version such as 1.2.3 or v1.2.3',
      "./spire/values.yaml:1: must be a mapping of Helm values",
    ]);
  });

  test("a missing index, an empty item, and a local chart with no Chart.yaml", async () => {
    expect(await problemsOf({ "README.md": "x" })).toEqual([
      "./nvke-deploy.yaml: does not exist; a deploy path lists its items in nvke-deploy.yaml",
    ]);
    const { "crds/crd.yaml": _crd, "crds/deploy.yaml": _deploy, "controller/chart/Chart.yaml": _chart, ...rest } = GOOD;
    const problems = await problemsOf({ ...rest, "crds/README.md": "no manifests here" });
    expect(problems).toEqual([
      './controller/chart-pin.yaml: field chart: "./chart" names a local chart directory that holds no Chart.yaml (with no repository, chart is a directory relative to the item)',
      "./crds: holds neither chart-pin.yaml nor manifests (*.yaml, *.yml, *.json)",
    ]);
  });

  test("readDeployPath fails with DEPLOY_PATH_INVALID carrying every problem; nothing to plan", async () => {
    const dir = await tree({ ...GOOD, "spire/chart-pin.yaml": "chart: spire\nversion: x\nextra: secret-value\n" });
    const error = await userErrorOf(readDeployPath(dir));
    expect(error.code).toBe("DEPLOY_PATH_INVALID");
    expect(error.message).toBe(`deploy path ${dir} has 2 problems; nothing was applied`);
    expect(JSON.stringify(error.problems)).not.toContain("secret-value");
  });
});

test("a manifest in another namespace than its item's is a located problem", async () => {
  const { path, cleanup } = await tempDir("deploy-path-");
  try {
    await mkdir(join(path, "app"), { recursive: true });
    await writeFile(
      join(path, "nvke-deploy.yaml"),
      "apiVersion: deploy.nodekit.dev/v1alpha1\nkind: DeployPath\nmetadata: { name: x }\nspec:\n  items:\n    - name: app\n      namespace: apps\n",
    );
    await writeFile(
      join(path, "app", "cm.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: other\n",
    );
    const loaded = await loadDeployPath(path);
    expect(loaded.problems.map(formatProblem)).toEqual([
      `${path}/app/cm.yaml:5: field metadata.namespace: is "other", but the item's namespace is "apps": an item's manifests are applied into its namespace; move the object to an item of its own`,
    ]);
  } finally {
    await cleanup();
  }
});

test("files that are not UTF-8 are located problems, every one in the same pass", async () => {
  const dir = await tree(GOOD);
  // Latin-1 "é" in a values file, and a UTF-16 byte-order mark on a manifest.
  await writeFile(join(dir, "spire/values.yaml"), Buffer.from("global:\n  name: caf\xe9\n", "latin1"));
  await writeFile(
    join(dir, "crds/crd.yaml"),
    Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("a: 1\n", "utf16le")]),
  );
  const loaded = await loadDeployPath(dir);
  expect(loaded.deployPath).toBeUndefined();
  expect(loaded.problems.map(formatProblem)).toEqual([
    `${join(dir, "crds/crd.yaml")}: is UTF-16 text, not UTF-8; save it as UTF-8 (without a byte-order mark)`,
    `${join(dir, "spire/values.yaml")}:2: column 12: is not UTF-8 text (byte 0xe9 is not part of a UTF-8 character); save the file as UTF-8`,
  ]);
});
