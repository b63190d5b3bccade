import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createExecaRunner } from "@nodekit/process";
import { runCli, userErrorOf } from "@nodekit/test-utils";
import { buildProviderRepository, NICO_INFRASTRUCTURE } from "@nodekit/testenv/capi-repository";
import { dump } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InstallInputs, upgradeTarget } from "../src/services/install.ts";
import { recordConfigMap } from "../src/services/install-record.ts";
import { upgradePlan } from "../src/services/upgrade.ts";
import { apply } from "./helpers.ts";
import { CONTROLLER_ITEM, type InstallFixture, inputArgs, installFixture, siteFiles } from "./install-fixture.ts";

// `nvkectl upgrade plan` (issue 26 §2) against a real API server: the site's install record
// (as the install writes it for these inputs) against a newer deploy path: one chart and one
// Cluster API provider newer, the provider's contract read from its metadata.yaml.

const API_KEY = "nico-key-upgrade-3Xw";
let fixture: InstallFixture;
let inputs: InstallInputs;

beforeAll(async () => {
  fixture = await installFixture("nvkectl-upgrade-");
  await buildProviderRepository(join(fixture.work, "providers"), { infrastructure: NICO_INFRASTRUCTURE });
  await fixture.write({
    ...siteFiles({
      site: ["lab", "site-node-1"],
      organizationId: "org-42",
      stackExtra: "images:\n  profiles: registry.example.test/profiles:v1\n",
      path: ["test", CONTROLLER_ITEM],
    }),
    "path/controller/chart-pin.yaml": "chart: ./chart\nversion: 0.1.0\n",
    "path/controller/chart/Chart.yaml": "apiVersion: v2\nname: controller\nversion: 0.1.0\n",
    "path/controller/chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
  });
  inputs = fixture.inputs({ NVKE_NICO_API_KEY: API_KEY });
}, 300_000);

afterAll(async () => {
  await fixture?.cleanup();
});

/** The record the install writes for `inputs`, put on the site as the install's last item does. */
async function installedRecord(from: InstallInputs) {
  const { content } = await upgradeTarget(from);
  await apply(fixture.admin, recordConfigMap({ ...content, installedAt: "2026-12-03T09:00:00.000Z" }));
}

/** A newer deploy path: the chart at 0.2.0, the nico provider at `nico`, with its metadata.yaml saying `contract`. */
async function newerPath(dir: string, nico: string, contract: string) {
  await cp(join(fixture.work, "path"), join(fixture.work, dir), { recursive: true });
  const index = await readFile(join(fixture.work, "path", "nvke-deploy.yaml"), "utf8");
  await writeFile(join(fixture.work, dir, "nvke-deploy.yaml"), index.replace("version: v0.3.0", `version: ${nico}`));
  await fixture.write({
    [`${dir}/controller/chart-pin.yaml`]: "chart: ./chart\nversion: 0.2.0\n",
    [`${dir}/controller/chart/Chart.yaml`]: "apiVersion: v2\nname: controller\nversion: 0.2.0\n",
    [`providers/infrastructure-nico/${nico}/metadata.yaml`]: dump({
      apiVersion: "clusterctl.cluster.x-k8s.io/v1alpha3",
      kind: "Metadata",
      releaseSeries: [
        { major: 0, minor: 3, contract: "v1beta2" },
        { major: 0, minor: Number(nico.split(".")[1]), contract },
      ],
    }),
  });
  return { ...inputs, deployPath: join(fixture.work, dir) };
}

describe("nvkectl upgrade plan", () => {
  test("a site without an install record: nothing to upgrade from", async () => {
    const error = await userErrorOf(upgradePlan({ inputs, runner: createExecaRunner() }));
    expect(error.code).toBe("INSTALL_RECORD_NOT_FOUND");
    expect(error.exitCode).toBe(4);
  });

  test("one chart and one provider newer: from → to, what restarts, the contracts; nothing refused", async () => {
    await installedRecord(inputs);
    const newer = await newerPath("path-newer", "v0.4.0", "v1beta2");
    const plan = await upgradePlan({ inputs: newer, runner: createExecaRunner() });
    expect(plan.refused).toEqual([]);
    expect(plan.items).toMatchObject([
      { id: "controller", kind: "chart", change: "changed", fromVersion: "0.1.0", toVersion: "0.2.0" },
    ]);
    expect(plan.items[0]?.restarts).toContain("helm upgrade of release controller in nke-controller");
    expect(plan.providers.map((p) => [p.name, p.change, p.from, p.to, p.fromContract, p.toContract])).toEqual([
      ["cluster-api", "unchanged", "v1.11.7", "v1.11.7", "v1beta2", "v1beta2"],
      ["kubeadm", "unchanged", "v1.11.7", "v1.11.7", "v1beta2", "v1beta2"],
      ["kubeadm", "unchanged", "v1.11.7", "v1.11.7", "v1beta2", "v1beta2"],
      ["nico", "upgrade", "v0.3.0", "v0.4.0", "v1beta2", "v1beta2"],
    ]);

    // The same through the built CLI, -o json, timed (the bench asks for < 2 s on the sandbox)
    const args = ["upgrade", "plan", ...inputArgs(newer), "--kubeconfig", fixture.admin];
    const env = { HOME: fixture.work, PATH: process.env.PATH, NVKE_NICO_API_KEY: API_KEY };
    const started = performance.now();
    const json = await runCli("nvkectl", [...args, "-o", "json"], { env });
    const took = performance.now() - started;
    expect(json.exitCode, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ site: "lab", refused: [], stackConfigChanged: false });
    console.log(`upgrade plan (built CLI, test tier): ${took.toFixed(0)} ms`);
    const table = await runCli("nvkectl", args, { env });
    expect(table.stdout).toMatch(/^controller\s+chart\s+changed\s+0\.1\.0\s+0\.2\.0\s+helm upgrade/m);
    expect(table.stdout).toMatch(
      /^nico\s+InfrastructureProvider\s+upgrade\s+v0\.3\.0\s+v0\.4\.0\s+v1beta2 → v1beta2$/m,
    );
    expect(table.stdout + table.stderr).not.toContain(API_KEY);
  });

  test("a provider that would change contract against the core provider's, and a downgrade, are refused", async () => {
    const other = await newerPath("path-other-contract", "v0.5.0", "v1beta1");
    const plan = await upgradePlan({ inputs: other, runner: createExecaRunner() });
    expect(plan.refused).toEqual(["InfrastructureProvider nico: its contract would go back (v1beta2 → v1beta1)"]);
    // A site recorded at the newer path, planned back to the older one: a downgrade
    await installedRecord(await newerPath("path-newer-2", "v0.4.0", "v1beta2"));
    const back = await upgradePlan({ inputs, runner: createExecaRunner() });
    expect(back.refused).toEqual([
      "InfrastructureProvider nico: a downgrade (v0.4.0 → v0.3.0); clusterctl never moves a provider back",
      "item controller: chart 0.2.0 → 0.1.0 is a downgrade",
    ]);
  });
});
