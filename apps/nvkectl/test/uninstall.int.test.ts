import { join } from "node:path";
import { formatPlan } from "@nodekit/plan";
import { createExecaRunner, createRecordingRunner } from "@nodekit/process";
import { runCli, userErrorOf } from "@nodekit/test-utils";
import { buildProviderRepository, NICO_INFRASTRUCTURE } from "@nodekit/testenv/capi-repository";
import { type ControllerStandIn, startControllerStandIn } from "@nodekit/testenv/controller-standin";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InstallInputs, install } from "../src/services/install.ts";
import { prepareUninstall, uninstall } from "../src/services/uninstall.ts";
import { type InstallFixture, installFixture } from "./install-fixture.ts";
import * as lab from "./lab-site.ts";

// `nvkectl uninstall` (issue 26 §2, NV-16) against the test tier, after a real install (real
// kubectl, helm and clusterctl, Cluster API from its module): the reverse plan of the install
// record; the dry run prints exactly the calls the run makes; it refuses while tenant clusters
// exist; and the site is left as it was before the install, object for object.

const API_KEY = "nico-key-uninstall-7Qp";

let fixture: InstallFixture;
let standIn: ControllerStandIn;
let inputs: InstallInputs;

/** What a site bootstrap leaves and the install adds to: every object of these kinds, by name. */
const KINDS = [
  "namespaces",
  "customresourcedefinitions",
  "clusterroles",
  "clusterrolebindings",
  "storageclasses",
  "validatingwebhookconfigurations",
  "mutatingwebhookconfigurations",
  "deployments",
  "services",
  "serviceaccounts",
  "configmaps",
  "secrets",
  "networkpolicies",
  "roles",
  "rolebindings",
];

async function snapshot(): Promise<Record<string, string[]>> {
  const found: Record<string, string[]> = {};
  for (const kind of KINDS) {
    const list = await fixture.json("get", kind, "--all-namespaces");
    found[kind] = list.items
      .map((o: { metadata: { namespace?: string; name: string } }) =>
        o.metadata.namespace === undefined ? o.metadata.name : `${o.metadata.namespace}/${o.metadata.name}`,
      )
      // What the API server makes itself, whoever installs what.
      .filter((name: string) => !/^(kube-[a-z-]+\/|default\/)?kube-root-ca\.crt$/.test(name))
      .sort();
  }
  return found;
}

let before: Record<string, string[]>;

beforeAll(async () => {
  fixture = await installFixture("nvkectl-uninstall-");
  await buildProviderRepository(join(fixture.work, "providers"), { infrastructure: NICO_INFRASTRUCTURE });
  standIn = startControllerStandIn(fixture.admin);
  await fixture.addNodes("amd64", "site-node-1");
  await fixture.write(
    lab.files("single", "", {
      "widgets/a-crd.yaml": lab.WIDGETS_CRD,
      "widgets/b-app.yaml": lab.documents(lab.WIDGETS.namespace, lab.WIDGETS.settings(3)),
      ...lab.controllerChart({
        "deployment.yaml": lab.controllerDeployment({
          podSpec: "      containers: [{ name: controller, image: registry.invalid/controller:1 }]\n",
        }),
      }),
    }),
  );
  inputs = fixture.inputs({ NVKE_NICO_API_KEY: API_KEY });
  before = await snapshot();
}, 300_000);

afterAll(async () => {
  await standIn?.stop();
  await fixture?.cleanup();
});

const printedCalls = (dryRun: string) => dryRun.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
const uninstallInputs = () => ({ kubeconfig: fixture.admin, force: false, workDir: join(fixture.work, "state") });

describe("nvkectl uninstall", () => {
  test("the built CLI: --dry-run of a site without a record exits 4 and names the record", async () => {
    const result = await runCli("nvkectl", ["uninstall", "--kubeconfig", fixture.admin, "--dry-run"], {
      env: { HOME: fixture.work, PATH: process.env.PATH },
    });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(
      "the site cluster has no install record (ConfigMap kube-system/nvkectl-install-record)",
    );
  });

  test("a site without an install record: nothing to uninstall, exit 4, nothing asked to change", async () => {
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const error = await userErrorOf(
      uninstall({ inputs: uninstallInputs(), runner: witness, dryRun: true, redactor: inputs.redactor }),
    );
    expect(error.code).toBe("INSTALL_RECORD_NOT_FOUND");
    expect(error.exitCode).toBe(4);
    expect(witness.calls.map((c) => c.call.args.slice(3, 5))).toEqual([["get", "ConfigMap.v1."]]);
  });

  test("after an install: refuses while a tenant cluster exists; the dry run prints the calls the run makes; nothing the install made is left", async () => {
    // Given an installed site
    await install({ inputs, runner: createExecaRunner(), dryRun: false });
    expect((await snapshot()).namespaces).toContain("capi-system");

    // and a tenant cluster: the uninstall refuses, in the dry run and the run, and changes nothing
    await fixture.kubectl("create", "namespace", "tenants");
    await createExecaRunner().run({
      command: "kubectl",
      args: ["--kubeconfig", fixture.admin, "create", "-f", "-"],
      input: JSON.stringify({
        apiVersion: "cluster.x-k8s.io/v1beta2",
        kind: "Cluster",
        metadata: { name: "tenant-a", namespace: "tenants" },
        spec: { clusterNetwork: { pods: { cidrBlocks: ["10.244.0.0/16"] } } },
      }),
    });
    for (const dryRun of [true, false]) {
      const witness = createRecordingRunner({ inner: createExecaRunner() });
      const refused = await userErrorOf(
        uninstall({ inputs: uninstallInputs(), runner: witness, dryRun, redactor: inputs.redactor }),
      );
      expect(refused.code).toBe("UNINSTALL_TENANT_CLUSTERS_EXIST");
      expect(refused.exitCode).toBe(5);
      expect(refused.message).toContain("(tenants/tenant-a)");
      expect(witness.calls.filter((c) => c.line.includes(" delete "))).toEqual([]);
    }
    // --force would go ahead: its dry run plans
    const forced = await uninstall({
      inputs: { ...uninstallInputs(), force: true },
      runner: createExecaRunner(),
      dryRun: true,
      redactor: inputs.redactor,
    });
    expect(forced.plan.observations.tenantClusters).toEqual(["tenants/tenant-a"]);
    await fixture.kubectl("delete", "clusters.cluster.x-k8s.io", "tenant-a", "-n", "tenants");
    await fixture.kubectl("delete", "namespace", "tenants", "--wait=true");

    // When the dry run prints the plan, then the uninstall runs it (the recorder as witness)
    const dry = formatPlan(
      (
        await uninstall({
          inputs: uninstallInputs(),
          runner: createExecaRunner(),
          dryRun: true,
          redactor: inputs.redactor,
        })
      ).plan,
    );
    expect(dry).toContain("helm uninstall controller --namespace nke-controller --wait");
    const deletes = dry.split("\n").filter((line) => !line.startsWith("#") && line.includes("clusterctl delete "));
    expect(deletes.map((line) => line.replace(/^.* clusterctl delete (\S+ \S+).*$/, "$1"))).toEqual([
      "--infrastructure nico",
      "--control-plane kubeadm",
      "--bootstrap kubeadm",
      "--core cluster-api",
    ]);
    expect(dry).toContain(
      "delete customresourcedefinitions.apiextensions.k8s.io widgets.example.test --ignore-not-found",
    );
    expect(dry).toContain(
      "delete NetworkPolicy.v1.networking.k8s.io nvke-controller-api-clients --namespace nke-controller --ignore-not-found",
    );
    expect(dry).not.toContain(API_KEY);
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const context = await prepareUninstall(uninstallInputs(), createExecaRunner());
    expect(context.observations.releases).toEqual(["nke-controller/controller"]);
    await uninstall({ inputs: uninstallInputs(), runner: witness, dryRun: false, redactor: inputs.redactor });
    // Then it ran exactly the printed calls (after the same read-only observations)
    expect(witness.calls.slice(-printedCalls(dry).length).map((c) => c.line)).toEqual(printedCalls(dry));

    // and the site is as it was before the install, object for object
    expect(await snapshot()).toEqual(before);
    expect(
      (await fixture.json("get", "crd", "--selector=clusterctl.cluster.x-k8s.io/core=cert-manager")).items,
    ).toEqual([]);

    // And a second uninstall finds nothing to do
    const again = await userErrorOf(
      uninstall({ inputs: uninstallInputs(), runner: createExecaRunner(), dryRun: true, redactor: inputs.redactor }),
    );
    expect(again.code).toBe("INSTALL_RECORD_NOT_FOUND");
  }, 900_000);
});
