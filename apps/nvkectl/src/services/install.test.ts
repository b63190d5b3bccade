import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readDeployPath } from "@nodekit/deploy-path";
import { formatPlan, planCallLines } from "@nodekit/plan";
import { parseSiteSpec } from "@nodekit/sitespec";
import { parseStackConfig } from "@nodekit/stack-config";
import { repoRoot } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { type InstallContext, planInstall } from "./install.ts";

async function shippedContext(providers: Record<string, string> = {}): Promise<InstallContext> {
  const site = parseSiteSpec(await readFile(join(repoRoot, "examples/sitespec.yaml"), "utf8"), { source: "s" }).spec;
  const filled = (await readFile(join(repoRoot, "examples/stack.yaml"), "utf8")).replace(
    /REPLACE_[A-Z_]+/g,
    (placeholder) =>
      ({
        REPLACE_NICO_API_ENDPOINT: "https://nico.example.net/api",
        REPLACE_PROFILES_IMAGE: "registry.example.net/nvke/profiles:v1",
        REPLACE_PROVIDER_REPOSITORY_DIR: "/srv/providers",
      })[placeholder] ?? "filled",
  );
  const stack = parseStackConfig(filled, { source: "stack.yaml" }).config;
  if (site === undefined || stack === undefined) throw new Error("the examples do not validate");
  return {
    site,
    stack,
    stackDir: "/srv",
    deployPath: await readDeployPath(join(repoRoot, "deploy/nico")),
    target: { kubeconfig: "/srv/my-tier0-site.kubeconfig" },
    workDir: "/srv/state",
    nicoApiKey: "k3y-not-printed",
    observations: { architecture: "amd64", nodes: 4, providers },
  };
}

test("the shipped deploy path parses, validates and dry-runs in the order the seed gives", async () => {
  const plan = planInstall(await shippedContext());
  expect(plan.items.map((item) => item.id)).toEqual([
    "cluster-api",
    "storage-class",
    "node-architecture",
    "nico-credentials",
    "spire-crds",
    "spire",
    "nvke-controller",
    "nvke-config",
    "spire-patch",
    "client-networks",
  ]);
  const text = formatPlan(plan);
  expect(text).not.toContain("k3y-not-printed");
  const lines = planCallLines(plan);
  expect(lines[0]).toBe(
    "HOME=/srv/state/home XDG_CONFIG_HOME=/srv/state/home/.config XDG_CACHE_HOME=/srv/state/home/.cache XDG_DATA_HOME=/srv/state/home/.local/share CLUSTERCTL_DISABLE_VERSIONCHECK=true clusterctl init --config /srv/state/clusterctl.yaml --core cluster-api:v1.11.7 --bootstrap kubeadm:v1.11.7 --control-plane kubeadm:v1.11.7 --infrastructure nico:v0.3.0 --wait-providers --wait-provider-timeout 600 --kubeconfig /srv/my-tier0-site.kubeconfig",
  );
  expect(
    lines.some((line) =>
      line.includes(
        "helm upgrade --install spire spire --repo https://spiffe.github.io/helm-charts-hardened --version 0.24.1",
      ),
    ),
  ).toBe(true);
  const config = plan.items[0]?.steps[0];
  expect(config?.kind === "action" && String(config.params?.content)).not.toMatch(/github|https?:/);
});

test("providers already installed at the pins are not installed again; another version is refused", async () => {
  const installed = {
    "CoreProvider/cluster-api": "v1.11.7",
    "BootstrapProvider/kubeadm": "v1.11.7",
    "ControlPlaneProvider/kubeadm": "v1.11.7",
  };
  const plan = planInstall(await shippedContext(installed));
  expect(planCallLines(plan)[0]).toContain(
    "clusterctl init --config /srv/state/clusterctl.yaml --infrastructure nico:v0.3.0 --wait",
  );
  const older = await shippedContext({ ...installed, "CoreProvider/cluster-api": "v1.10.0" });
  expect(() => planInstall(older)).toThrow(
    "Cluster API provider cluster-api (CoreProvider) is installed at v1.10.0; the deploy path pins v1.11.7",
  );
});
