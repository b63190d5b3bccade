import { createHash } from "node:crypto";
import { chmod, cp, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatPlan } from "@nodekit/plan";
import { createExecaRunner, createRecordingRunner } from "@nodekit/process";
import { runCli, userErrorOf } from "@nodekit/test-utils";
import { buildProviderRepository, NICO_INFRASTRUCTURE } from "@nodekit/testenv/capi-repository";
import { type ControllerStandIn, startControllerStandIn } from "@nodekit/testenv/controller-standin";
import { type NicoProviderStandIn, startNicoProviderStandIn } from "@nodekit/testenv/nico-provider-standin";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type InstallInputs, install, planInstall, prepareInstall, runInstall } from "../src/services/install.ts";
import { parseInstallRecord } from "../src/services/install-record.ts";
import { PROVIDERS } from "../src/services/provider-catalogue.ts";
import { getProviders } from "../src/services/providers.ts";
import { type InstallFixture, inputArgs, installFixture } from "./install-fixture.ts";
import * as lab from "./lab-site.ts";

// nvkectl install for real against the test tier: real kubectl, helm and clusterctl, Cluster
// API built from its module with webhooks stripped, and the controller-manager stand-in
// that makes Deployments and Jobs ready. The dry run's printed calls are compared with the
// calls the real run made (the recorder as witness). The control plane is this file's own:
// Cluster API, the StorageClass, the Nodes and the namespaces it installs reach no other file.

const API_KEY = "nico-key-Zq81xv";

let fixture: InstallFixture;
let work: string;
let standIn: ControllerStandIn;
let nicoProvider: NicoProviderStandIn;
let admin: string;
let inputs: InstallInputs;

const write = (files: Record<string, string>) => fixture.write(files);
const kubectl = (...args: string[]) => fixture.kubectl(...args);
const json = (...args: string[]) => fixture.json(...args);

beforeAll(async () => {
  fixture = await installFixture("nvkectl-install-");
  ({ work, admin } = fixture);
  await buildProviderRepository(join(work, "providers"), { infrastructure: NICO_INFRASTRUCTURE });
  standIn = startControllerStandIn(admin);
  // NICo, as far as this test knows it, accepts the one key the install is given.
  nicoProvider = startNicoProviderStandIn(admin, {
    check: (key) =>
      key === API_KEY
        ? { state: "HEALTHY", message: "authenticated as organization org-42" }
        : { state: "INVALID", message: "NICo refused the API key" },
  });
  await fixture.addNodes("arm64", "site-node-1", "site-node-2");
  await write(
    lab.files(
      "perArchitecture",
      `      dependsOn: [widgets]
    - name: finish
      dependsOn: [controller]
`,
      {
        "widgets/a-crd.yaml": lab.WIDGETS_CRD,
        "widgets/b-app.yaml": lab.documents(lab.WIDGETS.namespace, lab.WIDGETS.deployment, lab.WIDGETS.first),
        ...lab.controllerChart({
          "deployment.yaml":
            lab.controllerDeployment({
              env: "            - { name: ENDPOINT, value: {{ .Values.nico.endpoint | quote }} }\n",
            }) +
            `---
apiVersion: batch/v1
kind: Job
metadata:
  name: controller-migrate
  annotations: { "helm.sh/hook": post-install,post-upgrade, "helm.sh/hook-delete-policy": before-hook-creation }
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{ name: migrate, image: "registry.invalid/controller:1" }]
`,
        }),
        "finish/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: finished
  namespace: nke-controller
data: { done: "yes" }
`,
      },
    ),
  );
  inputs = fixture.inputs({ NVKE_NICO_API_KEY: API_KEY });
}, 300_000);

afterAll(async () => {
  await standIn?.stop();
  await nicoProvider?.stop();
  await fixture?.cleanup();
});

const readRecord = (configMap: { data: Record<string, string> }) => parseInstallRecord(configMap.data);

const printedCalls = (dryRun: string) => dryRun.split("\n").filter((line) => line !== "" && !line.startsWith("#"));

/** Every object the install made, name → resourceVersion. */
async function versions(): Promise<Record<string, string>> {
  const kinds = [
    ["deployments.apps", "--all-namespaces"],
    ["configmaps", "--namespace=nke-controller"],
    ["secrets", "--namespace=nke-controller", "--selector=!owner"],
    ["secrets", "--namespace=nico-system"],
    ["networkpolicies", "--all-namespaces"],
    ["storageclasses"],
    ["customresourcedefinitions"],
    ["widgets.example.test", "--namespace=widgets"],
    ["providers.clusterctl.cluster.x-k8s.io", "--all-namespaces"],
    ["configmaps", "--namespace=kube-system", "--selector=app.kubernetes.io/component=install-record"],
  ];
  const entries: Array<[string, string]> = [];
  for (const [kind = "", ...flags] of kinds) {
    const list = await json("get", kind, ...flags);
    for (const item of list.items) {
      entries.push([`${kind}/${item.metadata.namespace ?? ""}/${item.metadata.name}`, item.metadata.resourceVersion]);
    }
  }
  return Object.fromEntries(entries);
}

describe("nvkectl install against the real API server", () => {
  test("the dry run prints exactly the calls the real run makes; everything is installed", async () => {
    // Given the plan a dry run prints (the observations ran, nothing changed)
    const observer = createExecaRunner();
    const dryRun = formatPlan(planInstall(await prepareInstall(inputs, observer)));
    expect(dryRun).toContain("clusterctl init --config");
    expect(dryRun).not.toContain(API_KEY);
    expect(await kubectl("get", "namespaces", "--output=name")).not.toContain("capi-system");

    // When the install runs for real, through the recording witness
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const context = await prepareInstall(inputs, observer);
    await runInstall(context, planInstall(context), { runner: witness, redactor: inputs.redactor });

    // Then it ran exactly the printed calls, in order
    expect(witness.calls.map((call) => call.line)).toEqual(printedCalls(dryRun));
    expect(printedCalls(dryRun)[0]).toMatch(
      /^HOME=.* CLUSTERCTL_DISABLE_VERSIONCHECK=true clusterctl init --config .*clusterctl.yaml --core cluster-api:v1.11.7 --bootstrap kubeadm:v1.11.7 --control-plane kubeadm:v1.11.7 --infrastructure nico:v0.3.0 --wait-providers/,
    );
    // and Cluster API, the StorageClass, the deploy path, the SPIRE patch and the NetworkPolicy exist
    const providers = await json("get", "providers.clusterctl.cluster.x-k8s.io", "--all-namespaces");
    expect(
      providers.items.map((p: { providerName: string; version: string }) => `${p.providerName}@${p.version}`).sort(),
    ).toEqual(["cluster-api@v1.11.7", "kubeadm@v1.11.7", "kubeadm@v1.11.7", "nico@v0.3.0"]);
    await json("get", "crd", "clusters.cluster.x-k8s.io");
    expect((await json("get", "storageclass", "lab-local")).provisioner).toBe("rancher.io/local-path");
    for (const [namespace, name] of [
      ["capi-system", "capi-controller-manager"],
      ["capi-kubeadm-bootstrap-system", "capi-kubeadm-bootstrap-controller-manager"],
      ["capi-kubeadm-control-plane-system", "capi-kubeadm-control-plane-controller-manager"],
      ["nico-system", "nico-controller-manager"],
    ]) {
      const pod = (await json("get", "deployment", name ?? "", "--namespace", namespace ?? "")).spec.template.spec;
      expect(pod.volumes).toContainEqual({
        name: "spire-agent-socket",
        csi: { driver: "csi.spiffe.io", readOnly: true },
      });
      expect(pod.containers.find((c: { name: string }) => c.name === "manager").env).toContainEqual({
        name: "SPIFFE_ENDPOINT_SOCKET",
        value: "unix:///run/spire/agent-sockets/spire-agent.sock",
      });
    }
    const controller = (await json("get", "deployment", "nvke-controller", "--namespace", "nke-controller")).spec
      .template.spec;
    expect(controller.nodeSelector).toEqual({ "kubernetes.io/arch": "arm64" });
    expect(controller.containers[0].env).toContainEqual({
      name: "PROFILES",
      value: "registry.example.test/profiles:v1-arm64",
    });
    expect((await json("get", "job", "controller-migrate", "--namespace", "nke-controller")).status.succeeded).toBe(1);
    const policy = await json("get", "networkpolicy", "nvke-controller-api-clients", "--namespace", "nke-controller");
    expect(policy.spec.ingress).toEqual([
      { from: [{ ipBlock: { cidr: "192.0.2.0/24" } }], ports: [{ protocol: "TCP", port: 8080 }] },
    ]);
    for (const [name, namespace] of [
      ["nico-credentials", "nico-system"],
      ["nvke-nico-credentials", "nke-controller"],
    ]) {
      const secret = await json("get", "secret", name ?? "", "--namespace", namespace ?? "");
      expect(Buffer.from(secret.data.apiKey, "base64").toString()).toBe(API_KEY);
    }
    const identity = await json(
      "get",
      "nicoidentities.infrastructure.cluster.x-k8s.io",
      "default",
      "-n",
      "nico-system",
    );
    expect(identity.spec).toEqual({ secretRef: { name: "nico-credentials", namespace: "nico-system" } });
    expect(JSON.stringify(witness.calls.map((call) => [call.line, call.call.args]))).not.toContain(API_KEY);
    const written = await readFile(join(work, "state", "stack-values.yaml"), "utf8");
    expect(written).not.toContain(API_KEY);
  });

  test("after the install, get providers reads nico CONFIGURED, and HEALTHY once the provider checked its credentials", async () => {
    // The provider's credential check (its stand-in here) reads the Secret the NicoIdentity names.
    await nicoProvider.reconcile();
    const [nico] = await getProviders({
      cluster: { kubeconfig: admin, runner: createExecaRunner() },
      providers: PROVIDERS.filter((p) => p.name === "nico"),
    });
    expect(nico).toMatchObject({
      name: "nico",
      state: "CONFIGURED",
      reason: "",
      credentials: "HEALTHY",
      identity: "nico-system/default",
      credentialsSecret: "nico-system/nico-credentials",
      credentialsMessage: "authenticated as organization org-42",
    });
    expect(Date.now() - Date.parse(nico?.lastCheckTime ?? "")).toBeLessThan(60_000);
  });

  test("a second run changes nothing: clusterctl is not run again and no object's resourceVersion moves", async () => {
    const before = await versions();
    const observer = createExecaRunner();
    const context = await prepareInstall(inputs, observer);
    const plan = planInstall(context);
    expect(plan.items[0]).toMatchObject({ id: "cluster-api", steps: [] });
    await runInstall(context, plan, { runner: createExecaRunner(), redactor: inputs.redactor });
    expect(await versions()).toEqual(before);
  });

  test("the install record: one ConfigMap says what is installed; a re-run keeps it, a changed input rewrites it", async () => {
    // Given the installed site: one object, labelled, in kube-system
    const records = await json(
      "get",
      "configmaps",
      "--all-namespaces",
      "--selector=app.kubernetes.io/component=install-record",
    );
    expect(
      records.items.map(
        (c: { metadata: { namespace: string; name: string } }) => `${c.metadata.namespace}/${c.metadata.name}`,
      ),
    ).toEqual(["kube-system/nvkectl-install-record"]);
    const record = readRecord(records.items[0]);
    // Then it names the site, the deploy path, each item with its version and digest, the providers, the stack config's hash and the time
    expect(record).toMatchObject({ site: "lab", deployPath: "test", certManager: "v1.19.1" });
    expect(record.release).toBeUndefined();
    expect(record.items.map((item) => [item.id, item.kind, item.version])).toEqual([
      ["widgets", "manifests", undefined],
      ["controller", "chart", "0.1.0"],
      ["finish", "manifests", undefined],
    ]);
    for (const item of record.items) expect(item.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(record.providers.map((p) => `${p.type}/${p.name}@${p.version}`)).toEqual([
      "CoreProvider/cluster-api@v1.11.7",
      "BootstrapProvider/kubeadm@v1.11.7",
      "ControlPlaneProvider/kubeadm@v1.11.7",
      "InfrastructureProvider/nico@v0.3.0",
    ]);
    expect(record.stackConfigSha256).toBe(
      `sha256:${createHash("sha256")
        .update(await readFile(inputs.stackConfig))
        .digest("hex")}`,
    );
    expect(Date.now() - Date.parse(record.installedAt)).toBeLessThan(15 * 60_000);
    expect(JSON.stringify(records)).not.toContain(API_KEY);

    // When the install runs again a day later with nothing changed: the record does not move
    const later = { ...inputs, now: () => new Date(Date.parse(record.installedAt) + 86_400_000) };
    await install({ inputs: later, runner: createExecaRunner(), dryRun: false });
    const again = await json("get", "configmap", "nvkectl-install-record", "-n", "kube-system");
    expect(again.metadata.resourceVersion).toBe(records.items[0].metadata.resourceVersion);

    // When an item's content changes, its digest and the time change
    await write({
      "path/finish/config.yaml": (await readFile(join(work, "path/finish/config.yaml"), "utf8")).replace(
        'done: "yes"',
        'done: "yes", also: "1"',
      ),
    });
    try {
      await install({ inputs: later, runner: createExecaRunner(), dryRun: false });
      const changed = readRecord(await json("get", "configmap", "nvkectl-install-record", "-n", "kube-system"));
      expect(changed.installedAt).toBe(new Date(Date.parse(record.installedAt) + 86_400_000).toISOString());
      expect(changed.items.find((i) => i.id === "finish")?.digest).not.toBe(
        record.items.find((i) => i.id === "finish")?.digest,
      );
      expect(changed.items.find((i) => i.id === "widgets")?.digest).toBe(
        record.items.find((i) => i.id === "widgets")?.digest,
      );
    } finally {
      await write({
        "path/finish/config.yaml": (await readFile(join(work, "path/finish/config.yaml"), "utf8")).replace(
          ', also: "1"',
          "",
        ),
      });
      await install({ inputs, runner: createExecaRunner(), dryRun: false });
    }
  });

  test("a failure in a middle item stops there, naming it; --from-item finishes", async () => {
    // Given a chart item in the middle of the path that now fails (its namespace does not exist yet)
    await write({
      "path/controller/chart/templates/later.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: later\n  namespace: not-yet\n",
    });
    const observer = createExecaRunner();
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const context = await prepareInstall(inputs, observer);
    const plan = planInstall(context);
    // When it runs, it stops at that item, naming it, and runs nothing after it
    const error = await userErrorOf(runInstall(context, plan, { runner: witness, redactor: inputs.redactor }));
    expect(error.message).toMatch(/^controller: /);
    expect(error.facts.planItem).toBe("controller");
    expect(witness.calls.at(-1)?.call.command).toBe("helm");
    expect(witness.calls.some((call) => call.line.includes("finish/config.yaml"))).toBe(false);
    // and the built CLI says how to continue from there, as docs/install.md promises
    const cli = await runCli(
      "nvkectl",
      ["install", ...inputArgs(inputs), ...["--kubeconfig", admin, "--work-dir", join(work, "state")]],
      { env: { HOME: work, NVKE_NICO_API_KEY: API_KEY, PATH: process.env.PATH }, timeoutMs: 110_000 },
    );
    expect(cli.exitCode).not.toBe(0);
    expect(cli.stderr).toContain("error: controller: ");
    expect(cli.stderr).toContain(
      `next: after fixing the cause, continue from controller: nvkectl install --sitespec ${inputs.siteSpec} --stack-config ${inputs.stackConfig} --deploy-path ${inputs.deployPath} --kubeconfig ${admin} --work-dir ${join(work, "state")} --from-item controller`,
    );
    expect(cli.stderr).not.toContain("running helm runs helm");
    // Then, once the cause is fixed, --from-item finishes the rest
    await kubectl("create", "namespace", "not-yet");
    const resumed = await runInstall(context, plan, {
      runner: witness,
      redactor: inputs.redactor,
      fromItem: "controller",
    });
    expect(resumed.skipped).toEqual([
      "cluster-api",
      "storage-class",
      "node-architecture",
      "nico-credentials",
      "widgets",
    ]);
    expect((await json("get", "configmap", "later", "--namespace", "not-yet")).metadata.name).toBe("later");
    expect((await json("get", "configmap", "finished", "--namespace", "nke-controller")).data).toEqual({ done: "yes" });
  });

  test("the built CLI: --dry-run -o json is the plan document; bad input fails with the file and field, and nothing is applied", async () => {
    const env = { HOME: work, NVKE_NICO_API_KEY: API_KEY, PATH: process.env.PATH };
    const base = ["install", ...inputArgs(inputs), "--kubeconfig", admin];
    const dry = await runCli("nvkectl", [...base, "--dry-run", "-o", "json"], { env });
    expect(dry.stderr).toBe("");
    expect(dry.exitCode).toBe(0);
    const document = JSON.parse(dry.stdout);
    expect(document).toMatchObject({
      apiVersion: "plan.nodekit.dev/v1",
      observations: { architecture: "arm64", nodes: 2 },
    });
    expect(document.items.map((item: { id: string }) => item.id)).toEqual([
      "cluster-api",
      "storage-class",
      "node-architecture",
      "nico-credentials",
      "widgets",
      "controller",
      "finish",
      "spire-patch",
      "client-networks",
      "prune",
    ]);
    expect(dry.stdout).not.toContain(API_KEY);

    // A real run through the CLI, with every call logged (-v): nothing to change, the key nowhere
    const before = await versions();
    const real = await runCli("nvkectl", [...base, "-v", "--work-dir", join(work, "state")], {
      env,
      timeoutMs: 110_000,
    });
    expect(real.exitCode).toBe(0);
    expect(real.stderr).toContain("[nico-credentials] done");
    expect(real.stderr).toContain("running kubectl --kubeconfig");
    expect(real.stderr).toContain("<<<(stdin:");
    expect(real.stderr + real.stdout).not.toContain(API_KEY);
    expect(await versions()).toEqual(before);

    await writeFile(
      join(work, "bad-stack.yaml"),
      (await readFile(inputs.stackConfig, "utf8")).replace("org-42", "REPLACE_ORG"),
    );
    const bad = await runCli(
      "nvkectl",
      [...base.slice(0, 3), "--stack-config", join(work, "bad-stack.yaml"), ...base.slice(5)],
      { env },
    );
    expect(bad.exitCode).toBe(3);
    expect(bad.stderr).toContain('bad-stack.yaml:5: field nico.organizationId: "REPLACE_ORG" is still a placeholder');
    const noKey = await runCli("nvkectl", base, { env: { ...env, NVKE_NICO_API_KEY: "" } });
    expect(noKey.exitCode).toBe(9);
    expect(noKey.stderr).toContain("NVKE_NICO_API_KEY is not set");
  });
});

// Issue 26 §1 item 5: what the install no longer renders is pruned, through its inventory and
// server-side apply's owner record; the dry run names each deletion the run makes.
describe("a re-run prunes what the stack config no longer renders", () => {
  const stackWith = async (file: string, edit: (text: string) => string) => {
    await write({ [file]: edit(await readFile(inputs.stackConfig, "utf8")) });
    return { ...inputs, stackConfig: join(work, file) };
  };

  test("emptied clientNetworks and a renamed StorageClass: the dry run names both deletions, the run makes them, a re-run prunes nothing", async () => {
    // Given the installed site (the policy and lab-local are in the inventory)
    const inventory = await json("get", "configmap", "nvkectl-install-record", "-n", "kube-system");
    expect(JSON.parse(inventory.data.objects)).toContainEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      name: "nvke-controller-api-clients",
      namespace: "nke-controller",
      item: "client-networks",
    });
    // When the stack config empties clientNetworks and renames the StorageClass
    const changed = await stackWith(
      "stack-changed.yaml",
      (text) => `${text.replace("clientNetworks: [192.0.2.0/24]\n", "")}storageClass:\n  name: lab-fast\n`,
    );
    const dry = await install({ inputs: changed, runner: createExecaRunner(), dryRun: true });
    const printed = formatPlan(dry.plan);
    // Then the dry run names each deletion, as the last item
    expect(printed).toContain(
      "# [9/9] prune: prune 2 objects no longer rendered: NetworkPolicy nke-controller/nvke-controller-api-clients, StorageClass lab-local",
    );
    const deletions = printed.split("\n").filter((line) => line.includes(" delete "));
    expect(deletions.map((line) => line.replace(/^kubectl --kubeconfig \S+ --request-timeout=30s /, ""))).toEqual([
      "delete NetworkPolicy.v1.networking.k8s.io nvke-controller-api-clients --namespace nke-controller --ignore-not-found",
      "delete StorageClass.v1.storage.k8s.io lab-local --ignore-not-found",
    ]);
    expect((await json("get", "networkpolicies", "-n", "nke-controller")).items).toHaveLength(1);

    // When it runs for real (the recorder as witness)
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    await install({ inputs: changed, runner: witness, dryRun: false });
    expect(witness.calls.filter((call) => call.line.includes(" delete ")).map((call) => call.line)).toEqual(deletions);
    // Then one default StorageClass is left, and no client-networks policy
    const classes = (await json("get", "storageclasses")).items as Array<{
      metadata: { name: string; annotations?: Record<string, string> };
    }>;
    expect(classes.map((c) => c.metadata.name)).toEqual(["lab-fast"]);
    expect((await json("get", "networkpolicies", "-n", "nke-controller")).items).toEqual([]);

    // And a re-run prunes nothing
    const again = await install({ inputs: changed, runner: createExecaRunner(), dryRun: true });
    expect(formatPlan(again.plan)).toMatch(
      /# \[9\/9\] prune: nothing to prune; the \d+ objects applied recorded in ConfigMap kube-system\/nvkectl-install-record/,
    );
    expect(formatPlan(again.plan)).not.toContain(" delete ");
  });

  test("an object no longer rendered that nvkectl did not apply is left in place, and the plan says so", async () => {
    // Given the policy back in the inventory, then replaced by one another tool made
    await install({ inputs, runner: createExecaRunner(), dryRun: false });
    await kubectl("delete", "networkpolicy", "nvke-controller-api-clients", "-n", "nke-controller");
    const policy = {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "nvke-controller-api-clients", namespace: "nke-controller" },
      spec: { podSelector: {}, policyTypes: ["Ingress"] },
    };
    await fixture.kubectlWith(policy, "create", "-f", "-");
    const changed = await stackWith("stack-no-clients.yaml", (text) =>
      text.replace("clientNetworks: [192.0.2.0/24]\n", ""),
    );
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const { plan } = await install({ inputs: changed, runner: witness, dryRun: false });
    expect(formatPlan(plan)).toContain(
      "# NetworkPolicy nke-controller/nvke-controller-api-clients (client-networks) is no longer rendered, but left in place: nvkectl did not apply it (its field managers: kubectl-create)",
    );
    expect(witness.calls.some((call) => call.line.includes(" delete "))).toBe(false);
    await json("get", "networkpolicy", "nvke-controller-api-clients", "-n", "nke-controller");
    await kubectl("delete", "networkpolicy", "nvke-controller-api-clients", "-n", "nke-controller");
    // The site as the other tests expect it: the shipped stack config again.
    await install({ inputs, runner: createExecaRunner(), dryRun: false });
  });
});

// Issue 26 §1 item 3: every tool, and every input, before the first change; item 7: the dry
// run makes every check the run makes, and honours --from-item.
describe("no partial installs: everything is checked before the first change, in the dry run too", () => {
  /** A PATH of kubectl and a clusterctl that says `clusterctlVersion`, and no helm. */
  async function pathWithoutHelm(name: string, clusterctlVersion: string): Promise<string> {
    const bin = join(work, name);
    await mkdir(bin);
    const kubectlPath = (await createExecaRunner().run({ command: "sh", args: ["-c", "command -v kubectl"] })).stdout;
    await symlink(kubectlPath.trim(), join(bin, "kubectl"));
    await writeFile(join(bin, "clusterctl"), `#!/bin/sh\necho ${clusterctlVersion}\n`);
    await chmod(join(bin, "clusterctl"), 0o755);
    return bin;
  }

  test("without helm, and with a clusterctl of another Cluster API series, nothing runs but the version questions", async () => {
    const bin = await pathWithoutHelm("no-helm", "v1.12.1");
    for (const dryRun of [true, false]) {
      const witness = createRecordingRunner({ inner: createExecaRunner({ env: { ...process.env, PATH: bin } }) });
      const error = await userErrorOf(install({ inputs, runner: witness, dryRun }));
      expect(error.code).toBe("INSTALL_PREREQUISITES_MISSING");
      expect(error.exitCode).toBe(9);
      expect(error.message).toBe(
        [
          "the install needs 2 tools this host lacks; nothing was changed:",
          "  helm: not found on PATH (need v3.12.0 or newer)",
          "  clusterctl: found v1.12.1, need the v1.11 series (v1.11.x, v1.11.7 or newer): the deploy path pins Cluster API v1.11.7",
        ].join("\n"),
      );
      // Only the versions were asked: no observation, nothing applied.
      expect(witness.calls.map((call) => call.call.args.filter((arg) => arg.startsWith("version")))).toEqual([
        ["version"],
        ["version"],
        ["version"],
      ]);
    }
    const older = await pathWithoutHelm("old-clusterctl", "clusterctl version: v1.11.2");
    const error = await userErrorOf(
      install({ inputs, runner: createExecaRunner({ env: { ...process.env, PATH: older } }), dryRun: true }),
    );
    expect(error.message).toContain("clusterctl: found v1.11.2, need v1.11.7 or newer");
  });

  test("an incomplete provider repository fails the dry run as it fails the run", async () => {
    // Given a deploy path that adds a provider the repository lacks
    await cp(join(work, "path"), join(work, "path-extra"), { recursive: true });
    const path = await readFile(join(work, "path", "nvke-deploy.yaml"), "utf8");
    await write({
      "path-extra/nvke-deploy.yaml": path.replace(
        "        controller: nico-system/nico-controller-manager\n",
        "        controller: nico-system/nico-controller-manager\n      - name: extra\n        version: v0.1.0\n        controller: extra-system/extra-controller-manager\n",
      ),
    });
    const extra = { ...inputs, deployPath: join(work, "path-extra") };
    for (const dryRun of [true, false]) {
      const witness = createRecordingRunner({ inner: createExecaRunner() });
      const error = await userErrorOf(install({ inputs: extra, runner: witness, dryRun }));
      expect(error.code).toBe("PROVIDER_REPOSITORY_INCOMPLETE");
      expect(error.why).toContain(join("infrastructure-extra", "v0.1.0", "infrastructure-components.yaml"));
      expect(witness.calls.filter((call) => call.line.includes(" apply ") || call.line.includes(" init "))).toEqual([]);
    }
  });

  test("the dry run honours --from-item: the items before it are skipped, and an unknown one is refused", async () => {
    const witness = createRecordingRunner({ inner: createExecaRunner() });
    const { plan } = await install({ inputs, runner: witness, dryRun: true, fromItem: "controller" });
    const printed = formatPlan(plan);
    expect(printed).toContain("# [4/10] nico-credentials: ");
    expect(printed).toContain("(skipped: before --from-item controller)\n# [5/10] widgets: ");
    expect(printed).not.toContain("nvkectl --force-conflicts --filename -");
    expect(printed.split("\n").find((line) => !line.startsWith("#"))).toMatch(
      /^HOME=.* helm upgrade --install controller /,
    );
    const unknown = await userErrorOf(install({ inputs, runner: witness, dryRun: true, fromItem: "spire" }));
    expect(unknown.code).toBe("PLAN_ITEM_UNKNOWN");
    expect(unknown.why).toBe(
      "its items are, in order: cluster-api, storage-class, node-architecture, nico-credentials, widgets, controller, finish, spire-patch, client-networks, prune",
    );
  });
});

describe("the nodes' architecture decides, or the install refuses", () => {
  test("mixed architectures are a clear error before anything runs", async () => {
    await fixture.addNodes("amd64", "site-node-x86");
    try {
      const error = await userErrorOf(prepareInstall(inputs, createExecaRunner()));
      expect(error.code).toBe("NODE_ARCHITECTURE_MIXED");
      expect(error.message).toBe(
        "the site cluster's nodes are of more than one architecture: arm64 (site-node-1, site-node-2); amd64 (site-node-x86)",
      );
    } finally {
      await kubectl("delete", "node", "site-node-x86");
    }
  });
});
