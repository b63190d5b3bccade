import { createPlan, formatPlan, planCallLines } from "@nodekit/plan";
import { load } from "js-yaml";
import { describe, expect, test } from "vitest";
import {
  type ClusterApiPins,
  clusterApiProviders,
  clusterApiRepositoryFiles,
  clusterctlConfig,
  compareInstalledProviders,
  planClusterApi,
} from "./index.ts";

const PINS: ClusterApiPins = {
  version: "1.11.7",
  certManager: "v1.18.2",
  infrastructure: [{ name: "nico", version: "0.3.0", controller: "nico-system/nico-controller-manager" }],
};
const REPOSITORY = { providers: "/srv/providers", certManager: "/srv/cert-manager" };
const target = { kubeconfig: "/srv/site.kubeconfig" };
const toolEnv = { HOME: "/srv/home" };

describe("clusterApiProviders", () => {
  test("the three providers clusterctl always installs at the core version, then each infrastructure provider", () => {
    const providers = clusterApiProviders(PINS);
    expect(providers.map((p) => `${p.flag} ${p.name}:${p.version} ${p.label}/${p.components}`)).toEqual([
      "--core cluster-api:v1.11.7 cluster-api/core-components.yaml",
      "--bootstrap kubeadm:v1.11.7 bootstrap-kubeadm/bootstrap-components.yaml",
      "--control-plane kubeadm:v1.11.7 control-plane-kubeadm/control-plane-components.yaml",
      "--infrastructure nico:v0.3.0 infrastructure-nico/infrastructure-components.yaml",
    ]);
    expect(providers[3]?.controller).toEqual({ namespace: "nico-system", name: "nico-controller-manager" });
  });
});

describe("the clusterctl configuration", () => {
  test("names every provider and cert-manager by a local file, never a GitHub release", () => {
    const config = load(clusterctlConfig(PINS, clusterApiProviders(PINS), REPOSITORY)) as {
      providers: Array<{ name: string; type: string; url: string }>;
      "cert-manager": { url: string; version: string };
    };
    expect(config.providers[0]).toEqual({
      name: "cluster-api",
      type: "CoreProvider",
      url: "file:///srv/providers/cluster-api/v1.11.7/core-components.yaml",
    });
    expect(config["cert-manager"]).toEqual({
      url: "file:///srv/cert-manager/cert-manager/v1.18.2/cert-manager.yaml",
      version: "v1.18.2",
    });
    expect(config.providers.every((p) => p.url.startsWith("file:///srv/providers/"))).toBe(true);
  });

  test("the repository files clusterctl reads: components and metadata.yaml of each provider, and cert-manager", () => {
    const files = clusterApiRepositoryFiles(PINS, clusterApiProviders(PINS), { providers: "/r" });
    expect(files).toHaveLength(9);
    expect(files).toContain("/r/infrastructure-nico/v0.3.0/metadata.yaml");
    expect(files.at(-1)).toBe("/r/cert-manager/v1.18.2/cert-manager.yaml");
  });
});

describe("planClusterApi", () => {
  test("one clusterctl init naming the configuration and every provider, in the tool's own environment", () => {
    const { item, config, missing } = planClusterApi(PINS, {
      target,
      toolEnv,
      configFile: "/srv/clusterctl.yaml",
      repository: REPOSITORY,
    });
    expect(item.id).toBe("cluster-api");
    expect(missing).toHaveLength(4);
    expect(config).toContain("cert-manager");
    expect(planCallLines(planOf(item))).toEqual([
      "HOME=/srv/home clusterctl init --config /srv/clusterctl.yaml --core cluster-api:v1.11.7 --bootstrap kubeadm:v1.11.7 --control-plane kubeadm:v1.11.7 --infrastructure nico:v0.3.0 --wait-providers --wait-provider-timeout 600 --kubeconfig /srv/site.kubeconfig",
    ]);
    const [step] = item.steps;
    expect(step?.kind === "exec" ? step.call.reads : []).toContain("/srv/clusterctl.yaml");
  });

  test("installed providers are left out; with all installed the item has no steps", () => {
    const core = {
      "CoreProvider/cluster-api": "v1.11.7",
      "BootstrapProvider/kubeadm": "v1.11.7",
      "ControlPlaneProvider/kubeadm": "v1.11.7",
    };
    const some = planClusterApi(PINS, {
      target,
      toolEnv,
      configFile: "/c.yaml",
      repository: REPOSITORY,
      installed: core,
    });
    expect(formatPlan(planOf(some.item))).toContain(
      "clusterctl init --config /c.yaml --infrastructure nico:v0.3.0 --wait",
    );
    // The configuration still lists every provider: clusterctl resolves the installed ones through it too.
    expect(some.config).toContain("core-components.yaml");
    const all = planClusterApi(PINS, {
      target,
      toolEnv,
      configFile: "/c.yaml",
      repository: REPOSITORY,
      installed: { ...core, "InfrastructureProvider/nico": "v0.3.0" },
    });
    expect(all.item.steps).toEqual([]);
    expect(all.item.title).toBe("Cluster API v1.11.7 (clusterctl init): every provider is installed");
  });

  test("a provider at another version is reported, not planned over", () => {
    const compared = compareInstalledProviders(clusterApiProviders(PINS), { "CoreProvider/cluster-api": "v1.10.0" });
    expect(compared.mismatched.map((m) => `${m.provider.name} ${m.installed} -> ${m.provider.version}`)).toEqual([
      "cluster-api v1.10.0 -> v1.11.7",
    ]);
    expect(compared.missing.map((p) => p.type)).toEqual([
      "BootstrapProvider",
      "ControlPlaneProvider",
      "InfrastructureProvider",
    ]);
  });
});

test("a provider named in upgrade is moved to its pin with clusterctl upgrade apply, after the init of the missing ones", () => {
  const planned = planClusterApi(PINS, {
    target,
    toolEnv,
    configFile: "/c.yaml",
    repository: REPOSITORY,
    installed: { "CoreProvider/cluster-api": "v1.10.0", "BootstrapProvider/kubeadm": "v1.10.0" },
    upgrade: new Set(["CoreProvider/cluster-api"]),
  });
  expect(planned.refused.map((r) => r.provider.type)).toEqual(["BootstrapProvider"]);
  expect(planned.item.title).toBe(
    "Cluster API v1.11.7: clusterctl upgrade apply of cluster-api v1.10.0 → v1.11.7, clusterctl init of the rest",
  );
  expect(planCallLines(planOf(planned.item))).toEqual([
    "HOME=/srv/home clusterctl init --config /c.yaml --control-plane kubeadm:v1.11.7 --infrastructure nico:v0.3.0 --wait-providers --wait-provider-timeout 600 --kubeconfig /srv/site.kubeconfig",
    "HOME=/srv/home clusterctl upgrade apply --config /c.yaml --core cluster-api:v1.11.7 --wait-providers --wait-provider-timeout 600 --kubeconfig /srv/site.kubeconfig",
  ]);
});

function planOf(item: ReturnType<typeof planClusterApi>["item"]) {
  return createPlan("cluster api", [item]);
}
