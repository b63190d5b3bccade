import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type DedicatedControlPlane, useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apply, type CliHome, cliHome, kubectl, NO_KUBECTL } from "./helpers.ts";

// Kubernetes habits (issue 27 item 5): with no site configured, the commands that read the
// site cluster take the kubeconfig kubectl, helm and clusterctl would (KUBECONFIG) and its
// --context; `get kubeconfig` and `get providers` read through @kubernetes/client-node, with no kubectl on PATH.

const TENANT_KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n# the tenant's own\n";

let plane: DedicatedControlPlane;
let home: CliHome;
let kubeconfig: string;

beforeAll(async () => {
  plane = await useControlPlane({ dedicated: true });
  home = await cliHome("nvkectl-kubeconfig-habits-");
  await apply(plane.adminKubeconfigPath, { apiVersion: "v1", kind: "Namespace", metadata: { name: "nvke-clusters" } });
  await apply(plane.adminKubeconfigPath, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: "nvke-clusters", name: "habits-kubeconfig" },
    data: { value: Buffer.from(TENANT_KUBECONFIG).toString("base64") },
  });
  // The admin kubeconfig with its context renamed "real", and a current-context "nowhere"
  // whose server nothing listens on: only --context real reaches the cluster.
  kubeconfig = join(home.path, "kubeconfig");
  await copyFile(plane.adminKubeconfigPath, kubeconfig);
  const current = (await kubectl(kubeconfig, ["config", "current-context"])).trim();
  await kubectl(kubeconfig, ["config", "rename-context", current, "real"]);
  await kubectl(kubeconfig, ["config", "set-cluster", "nowhere", "--server", "https://127.0.0.1:2"]);
  const user = (await kubectl(kubeconfig, ["config", "view", "-o", "jsonpath={.users[0].name}"])).trim();
  await kubectl(kubeconfig, ["config", "set-context", "nowhere", "--cluster", "nowhere", "--user", user]);
  await kubectl(kubeconfig, ["config", "use-context", "nowhere"]);
});
afterAll(async () => {
  await home?.cleanup();
});

describe("no site configured: KUBECONFIG and --context, as kubectl", () => {
  it("get kubeconfig reads the Secret through the context named, with no kubectl on PATH", async () => {
    const env = { KUBECONFIG: kubeconfig, PATH: NO_KUBECTL };
    const result = await home.nvkectl(["get", "kubeconfig", "habits", "--context", "real"], { env });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(TENANT_KUBECONFIG);
  });

  it("without --context, the kubeconfig's current-context is the one asked (here: nothing answers)", async () => {
    const result = await home.nvkectl(["get", "kubeconfig", "habits", "--request-timeout", "5s"], {
      env: { KUBECONFIG: kubeconfig, PATH: NO_KUBECTL },
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("127.0.0.1:2");
  });

  it("a context the kubeconfig does not define is named, with the ones it does", async () => {
    const result = await home.nvkectl(["get", "kubeconfig", "habits", "--context", "prod"], {
      env: { KUBECONFIG: kubeconfig, PATH: NO_KUBECTL },
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`kubeconfig ${kubeconfig} has no context "prod"`);
    expect(result.stderr).toContain("its contexts are");
    expect(result.stderr).toContain("real");
  });

  it("without KUBECONFIG, ~/.kube/config", async () => {
    await mkdir(join(home.path, ".kube"), { recursive: true });
    await copyFile(kubeconfig, join(home.path, ".kube", "config"));
    const result = await home.nvkectl(["get", "kubeconfig", "habits", "--context", "real"], {
      env: { PATH: NO_KUBECTL },
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(TENANT_KUBECONFIG);
  });

  it("KUBECONFIG with two files: merged as kubectl merges them, --context from the second file", async () => {
    // The first file defines only "nowhere" (its current-context); the second holds "real".
    const first = join(home.path, "first.kubeconfig");
    const second = join(home.path, "second.kubeconfig");
    await copyFile(kubeconfig, first);
    await copyFile(kubeconfig, second);
    await kubectl(first, ["config", "delete-context", "real"]);
    await kubectl(second, ["config", "delete-context", "nowhere"]);
    await kubectl(second, ["config", "unset", "current-context"]);
    const env = { KUBECONFIG: `${first}:${second}`, PATH: NO_KUBECTL };
    const result = await home.nvkectl(["get", "kubeconfig", "habits", "--context", "real"], { env });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe(TENANT_KUBECONFIG);
    const unknown = await home.nvkectl(["get", "providers", "--context", "prod"], { env });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain(`(${first}, ${second}) has no context "prod"`);
    expect(unknown.stderr).toContain("its contexts are nowhere, real");
  });

  it("version reads the cluster of the context named, with no site and no controller", async () => {
    const result = await home.nvkectl(["version", "--context", "real", "-o", "json"], {
      env: { KUBECONFIG: kubeconfig },
    });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.site).toBeUndefined();
    expect(report.siteCluster.kubernetesVersion).toMatch(/^v1\./);
    expect(report.installed).toBeNull();
  });

  it("get providers takes KUBECONFIG and --context too, with no kubectl on PATH", async () => {
    const result = await home.nvkectl(["get", "providers", "--context", "real", "-o", "json"], {
      env: { KUBECONFIG: kubeconfig, PATH: NO_KUBECTL },
    });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const names = (JSON.parse(result.stdout).items as Array<{ name: string; state: string }>).map((p) => p.state);
    expect(names).toEqual(["NOT-INSTALLED", "NOT-INSTALLED"]);
  });

  it("a site configured but not found is still an error, never a fallback to KUBECONFIG", async () => {
    const result = await home.nvkectl(["--site", "lab", "get", "kubeconfig", "habits", "--context", "real"], {
      env: { KUBECONFIG: kubeconfig, PATH: NO_KUBECTL },
    });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toMatch(/site \\?"lab\\?" is not configured/);
  });
});
