import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { run } from "./int-helpers.ts";
import { clientsFor } from "./kube.ts";
import { useControlPlane } from "./vitest.ts";

let work: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ path: work, cleanup } = await tempDir("testenv-kubectl-helm-"));
});
afterAll(() => cleanup());

describe("kubectl and helm against the control plane", () => {
  test("kubectl apply (the machine's kubectl) creates real objects", async () => {
    // Given a manifest with a ConfigMap and a Deployment
    const plane = await useControlPlane();
    const namespace = await plane.createNamespace("kubectl");
    const manifest = join(work, "app.yaml");
    await writeFile(
      manifest,
      `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  mode: sandbox
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 2
  selector:
    matchLabels: { app: app }
  template:
    metadata:
      labels: { app: app }
    spec:
      containers:
        - name: app
          image: registry.invalid/app:1.0
`,
    );

    // When kubectl applies it with the admin kubeconfig
    const { stdout } = await run("kubectl", [
      "--kubeconfig",
      plane.adminKubeconfigPath,
      "apply",
      "--namespace",
      namespace,
      "--filename",
      manifest,
    ]);

    // Then both objects exist in the API
    expect(stdout).toContain("configmap/app-config created");
    expect(stdout).toContain("deployment.apps/app created");
    const { core } = clientsFor(plane.adminKubeconfigPath);
    expect((await core.readNamespacedConfigMap({ name: "app-config", namespace })).data).toEqual({ mode: "sandbox" });
    const { stdout: json } = await run("kubectl", [
      "--kubeconfig",
      plane.adminKubeconfigPath,
      "get",
      "deployment/app",
      "--namespace",
      namespace,
      "--output",
      "json",
    ]);
    expect(JSON.parse(json).spec.replicas).toBe(2);
  });

  test("helm upgrade --install of a local chart creates and then upgrades a release", async () => {
    // Given a tiny local chart that requires a real server version
    const plane = await useControlPlane();
    const namespace = await plane.createNamespace("helm");
    const chart = join(work, "greeter");
    await mkdir(join(chart, "templates"), { recursive: true });
    await writeFile(
      join(chart, "Chart.yaml"),
      'apiVersion: v2\nname: greeter\nversion: 0.1.0\nkubeVersion: ">=1.30.0-0"\n',
    );
    await writeFile(join(chart, "values.yaml"), "greeting: hello\n");
    await writeFile(
      join(chart, "templates", "configmap.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
    );
    const helm = (...args: string[]) =>
      run(join(plane.binDir, "helm"), [...args, "--kubeconfig", plane.adminKubeconfigPath, "--namespace", namespace], {
        // Keep helm's cache, config and data out of the user's home.
        env: {
          ...process.env,
          HELM_CACHE_HOME: join(work, "helm-cache"),
          HELM_CONFIG_HOME: join(work, "helm-config"),
          HELM_DATA_HOME: join(work, "helm-data"),
        },
      });

    // When it is installed, then upgraded with a new value
    await helm("upgrade", "--install", "hi", chart);
    await helm("upgrade", "--install", "hi", chart, "--set", "greeting=bonjour");

    // Then the object and helm's release records are real
    const { core } = clientsFor(plane.adminKubeconfigPath);
    expect((await core.readNamespacedConfigMap({ name: "hi-greeting", namespace })).data).toEqual({
      greeting: "bonjour",
    });
    const releases = await core.listNamespacedSecret({ namespace, labelSelector: "owner=helm,name=hi" });
    expect(releases.items.map((secret) => secret.metadata?.labels?.version).sort()).toEqual(["1", "2"]);
    const { stdout } = await helm("list", "--output", "json");
    expect(JSON.parse(stdout)).toMatchObject([{ name: "hi", revision: "2", status: "deployed" }]);
  });
});
