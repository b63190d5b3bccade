// @runs-long 80 s (installs, then upgrades): started before the other files, see tooling/testenv/src/sequencer.ts.
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatPlan } from "@nodekit/plan";
import { createExecaRunner, createRecordingRunner, type RecordingRunner } from "@nodekit/process";
import { runCli, userErrorOf } from "@nodekit/test-utils";
import { buildProviderRepository, NICO_INFRASTRUCTURE } from "@nodekit/testenv/capi-repository";
import { type ControllerStandIn, startControllerStandIn } from "@nodekit/testenv/controller-standin";
import { dump } from "js-yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InstallInputs, install } from "../src/services/install.ts";
import { readInstallRecord } from "../src/services/install-record.ts";
import { upgradeApply } from "../src/services/upgrade-apply.ts";
import { CONTROLLER_ITEM, type InstallFixture, inputArgs, installFixture, siteFiles } from "./install-fixture.ts";

// `nvkectl upgrade apply` (issue 26 §2) against the test tier, after a real install (real
// kubectl, helm and clusterctl, Cluster API from its module): it refuses a downgrade and a
// site that drifted from its record, changing nothing; its dry run prints exactly the calls
// its run makes, the NICo provider moving with clusterctl upgrade apply and the chart with
// helm upgrade; the record says the new versions after it; a run that stops midway continues
// with --from-item, the part it moved already not taken for drift.

const API_KEY = "nico-key-upgrade-apply-5Rt";

let fixture: InstallFixture;
let standIn: ControllerStandIn;
let inputs: InstallInputs;

/** The chart at `version`, with a Deployment (helm --wait waits for it: the stand-in makes it ready). */
const chartFiles = (dir: string, version: string): Record<string, string> => ({
  [`${dir}/controller/chart-pin.yaml`]: `chart: ./chart\nversion: ${version}\n`,
  [`${dir}/controller/chart/Chart.yaml`]: `apiVersion: v2\nname: controller\nversion: ${version}\n`,
  [`${dir}/controller/chart/templates/deployment.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nvke-controller
  labels: { app.kubernetes.io/name: nvke-controller }
spec:
  replicas: 1
  selector: { matchLabels: { app.kubernetes.io/name: nvke-controller } }
  template:
    metadata: { labels: { app.kubernetes.io/name: nvke-controller, chart: "${version}" } }
    spec:
      containers: [{ name: controller, image: registry.invalid/controller:${version} }]
`,
});

/** A copy of the deploy path with the chart at `chart` and the nico provider at `nico`. */
async function pathAt(dir: string, chart: string, nico: string, extra: Record<string, string> = {}) {
  await cp(join(fixture.work, "path"), join(fixture.work, dir), { recursive: true });
  const index = await readFile(join(fixture.work, "path", "nvke-deploy.yaml"), "utf8");
  await writeFile(join(fixture.work, dir, "nvke-deploy.yaml"), index.replace("version: v0.3.0", `version: ${nico}`));
  await fixture.write({ ...chartFiles(dir, chart), ...extra });
  return { ...inputs, deployPath: join(fixture.work, dir) };
}

const printedCalls = (dryRun: string) => dryRun.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
/** The calls that would change the site: everything but reads. */
const mutating = (witness: RecordingRunner) =>
  witness.calls
    .map((c) => c.line)
    .filter((line) => / (apply|upgrade|init|delete|patch|create) /.test(line) && !/ (get|list|version) /.test(line));

beforeAll(async () => {
  fixture = await installFixture("nvkectl-upgrade-apply-");
  const providers = join(fixture.work, "providers");
  await buildProviderRepository(providers, { infrastructure: { ...NICO_INFRASTRUCTURE, version: "v0.4.0" } });
  await buildProviderRepository(providers, { infrastructure: NICO_INFRASTRUCTURE });
  // v0.4.0's metadata.yaml lists the series before it too, as a provider's does.
  await fixture.write({
    "providers/infrastructure-nico/v0.4.0/metadata.yaml": dump({
      apiVersion: "clusterctl.cluster.x-k8s.io/v1alpha3",
      kind: "Metadata",
      releaseSeries: [
        { major: 0, minor: 3, contract: "v1beta2" },
        { major: 0, minor: 4, contract: "v1beta2" },
      ],
    }),
  });
  standIn = startControllerStandIn(fixture.admin);
  await fixture.addNodes("amd64", "site-node-1");
  await fixture.write({
    ...siteFiles({
      site: ["lab", "site-node-1"],
      organizationId: "org-42",
      stackExtra: "images:\n  profiles: registry.example.test/profiles:v1\nclientNetworks: [192.0.2.0/24]\n",
      path: ["test", CONTROLLER_ITEM],
    }),
    ...chartFiles("path", "0.1.0"),
  });
  inputs = fixture.inputs({ NVKE_NICO_API_KEY: API_KEY });
  await install({ inputs, runner: createExecaRunner(), dryRun: false });
}, 600_000);

afterAll(async () => {
  await standIn?.stop();
  await fixture?.cleanup();
});

describe("nvkectl upgrade apply", () => {
  test("a downgrade is refused, in the dry run and the run, and nothing is changed", async () => {
    const older = await pathAt("path-older", "0.0.9", "v0.3.0");
    for (const dryRun of [true, false]) {
      const witness = createRecordingRunner({ inner: createExecaRunner() });
      const error = await userErrorOf(upgradeApply({ inputs: older, runner: witness, dryRun }));
      expect(error.code).toBe("UPGRADE_REFUSED");
      expect(error.exitCode).toBe(5);
      expect(error.message).toContain("item controller: chart 0.1.0 → 0.0.9 is a downgrade");
      expect(mutating(witness)).toEqual([]);
    }
    // The built CLI: exit 5, the refusal named
    const cli = await runCli(
      "nvkectl",
      [
        "upgrade",
        "apply",
        ...inputArgs(older),
        ...["--kubeconfig", fixture.admin, "--work-dir", join(fixture.work, "state")],
      ],
      { env: { HOME: fixture.work, NVKE_NICO_API_KEY: API_KEY, PATH: process.env.PATH }, timeoutMs: 110_000 },
    );
    expect(cli.exitCode).toBe(5);
    expect(cli.stderr).toContain("item controller: chart 0.1.0 → 0.0.9 is a downgrade");
  });

  test("a site that drifted from its record is refused, naming each difference, and nothing is changed", async () => {
    const newer = await pathAt("path-newer", "0.2.0", "v0.4.0");
    // Given the client-networks policy deleted by hand and the nico provider's inventory at another version
    await fixture.kubectl("delete", "networkpolicy", "nvke-controller-api-clients", "--namespace", "nke-controller");
    const patch = (version: string) =>
      fixture.kubectl(
        "patch",
        "providers.clusterctl.cluster.x-k8s.io",
        "infrastructure-nico",
        "--namespace",
        "nico-system",
        "--type=merge",
        `--patch={"version":"${version}"}`,
      );
    await patch("v0.2.0");
    for (const dryRun of [true, false]) {
      const witness = createRecordingRunner({ inner: createExecaRunner() });
      const error = await userErrorOf(upgradeApply({ inputs: newer, runner: witness, dryRun }));
      expect(error.code).toBe("UPGRADE_SITE_DRIFTED");
      expect(error.exitCode).toBe(5);
      expect(error.message).toContain(
        "Cluster API provider nico (InfrastructureProvider): recorded v0.3.0, found v0.2.0",
      );
      expect(error.message).toContain(
        "NetworkPolicy nke-controller/nvke-controller-api-clients (item client-networks): recorded applied by the install, found gone",
      );
      expect(mutating(witness)).toEqual([]);
    }
    // Put back as recorded, the upgrade is no longer refused
    await patch("v0.3.0");
    await install({ inputs, runner: createExecaRunner(), dryRun: false });
    await upgradeApply({ inputs: newer, runner: createExecaRunner(), dryRun: true });
  }, 600_000);

  test("the dry run prints exactly the calls the run makes; the provider and the chart move; the record says so", async () => {
    const newer = await pathAt("path-newer", "0.2.0", "v0.4.0");
    const dry = await upgradeApply({ inputs: newer, runner: createExecaRunner(), dryRun: true });
    expect(dry.upgrade.refused).toEqual([]);
    const printed = formatPlan(dry.plan);
    expect(printed).toMatch(
      / clusterctl upgrade apply --config \S+\/clusterctl\.yaml --infrastructure nico:v0\.4\.0 --wait-providers --wait-provider-timeout 600/,
    );
    expect(printed).not.toContain("clusterctl init");
    expect(printed).toContain("helm upgrade --install controller");
    expect(printed).not.toContain(API_KEY);

    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const ran = await upgradeApply({ inputs: newer, runner: witness, dryRun: false });
    expect(witness.calls.slice(-printedCalls(printed).length).map((c) => c.line)).toEqual(printedCalls(printed));
    expect(ran.ran).toContain("cluster-api");

    // The site runs the new versions, and its record says so
    const inventory = await fixture.json("get", "providers.clusterctl.cluster.x-k8s.io", "--all-namespaces");
    expect(inventory.items.find((p: { providerName: string }) => p.providerName === "nico")?.version).toBe("v0.4.0");
    const record = await readInstallRecord(createExecaRunner(), { kubeconfig: fixture.admin });
    expect(record?.providers.find((p) => p.name === "nico")?.version).toBe("v0.4.0");
    expect(record?.items.find((i) => i.id === "controller")?.version).toBe("0.2.0");
    expect(record?.deployPath).toBe("test");
    // and an upgrade to the same inputs again changes nothing: nothing to upgrade, the record's time kept
    const again = await upgradeApply({ inputs: newer, runner: createExecaRunner(), dryRun: false });
    expect(again.upgrade.items.map((i) => i.change)).toEqual(["unchanged"]);
    expect(again.upgrade.providers.every((p) => p.change === "unchanged")).toBe(true);
    expect((await readInstallRecord(createExecaRunner(), { kubeconfig: fixture.admin }))?.installedAt).toBe(
      record?.installedAt,
    );
  }, 900_000);

  test("a run that stops midway continues with --from-item: the part it moved is not drift; the record follows at the end", async () => {
    // Given a newer chart that fails (its template names a namespace that does not exist yet)
    const newest = await pathAt("path-newest", "0.3.0", "v0.4.0", {
      "path-newest/controller/chart/templates/later.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: later\n  namespace: not-yet\n",
    });
    const error = await userErrorOf(upgradeApply({ inputs: newest, runner: createExecaRunner(), dryRun: false }));
    expect(error.facts.planItem).toBe("controller");
    // and the built CLI says how to continue from there
    const argv = [...inputArgs(newest), ...["--kubeconfig", fixture.admin, "--work-dir", join(fixture.work, "state")]];
    const cli = await runCli("nvkectl", ["upgrade", "apply", ...argv], {
      env: { HOME: fixture.work, NVKE_NICO_API_KEY: API_KEY, PATH: process.env.PATH },
      timeoutMs: 110_000,
    });
    expect(cli.exitCode).not.toBe(0);
    expect(cli.stderr).toContain(
      `next: after fixing the cause, continue from controller: nvkectl upgrade apply ${argv.join(" ")} --from-item controller`,
    );
    // The record is the old one still: the item that writes it did not run
    const before = await readInstallRecord(createExecaRunner(), { kubeconfig: fixture.admin });
    expect(before?.items.find((i) => i.id === "controller")?.version).toBe("0.2.0");

    // When the cause is fixed and the upgrade continues from that item (its dry run first)
    await fixture.kubectl("create", "namespace", "not-yet");
    const dry = await upgradeApply({
      inputs: newest,
      runner: createExecaRunner(),
      dryRun: true,
      fromItem: "controller",
    });
    const printed = formatPlan(dry.plan);
    expect(printed).toContain("(skipped: before --from-item controller)");
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const resumed = await upgradeApply({ inputs: newest, runner: witness, dryRun: false, fromItem: "controller" });
    expect(resumed.ran[0]).toBe("controller");
    expect(witness.calls.slice(-printedCalls(printed).length).map((c) => c.line)).toEqual(printedCalls(printed));

    // Then the site and its record are at the new version
    expect((await fixture.json("get", "configmap", "later", "--namespace", "not-yet")).metadata.name).toBe("later");
    const after = await readInstallRecord(createExecaRunner(), { kubeconfig: fixture.admin });
    expect(after?.items.find((i) => i.id === "controller")?.version).toBe("0.3.0");
    // An unknown --from-item is refused by the dry run as by the run
    const unknown = await userErrorOf(
      upgradeApply({ inputs: newest, runner: createExecaRunner(), dryRun: true, fromItem: "spire" }),
    );
    expect(unknown.code).toBe("PLAN_ITEM_UNKNOWN");
  }, 900_000);
});
