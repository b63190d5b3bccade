// @runs-long 280 s (seven whole registrations): started before the other files, see tooling/testenv/src/sequencer.ts.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { access, chown, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createNodeRingsClient } from "@nodekit/noderings-api";
import type { RunningNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { planCallLines } from "@nodekit/plan";
import { createExecaRunner, createRecordingRunner, Redactor } from "@nodekit/process";
import { otherUser, repoRoot } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { register } from "../src/services/register.ts";
import { type AgentMachine, agentMachine, platformProxy, SERVICE_CIDR } from "./agent-fixture.ts";
import { FIXTURES, hostRoot, kubectl, kubectlApply, type NrHome, REGISTER_PHASES, type StandIns } from "./helpers.ts";

// nr cluster register end to end: the NodeRings emulator as the platform, the test tier's
// real kube-apiserver as the agent cluster (an explicit --kubeconfig stands for what k3s
// leaves), real kubectl applying the tigera operator's manifests and Calico's resources,
// real helm installing an operator chart fixture, and recording stand-ins on PATH for the
// k3s installer and liqoctl, which cannot run here.

const TOKEN = "nr-e2e-token";
const CANARY = "canary-7f3e9b1c-proxmox-secret-4a2d";

interface Seen {
  method: string;
  url: string;
  headers: string;
  body: string;
}

let machine: AgentMachine;
let kubeconfig: string;
let emulator: RunningNodeRingsEmulator;
let home: NrHome;
let stand: StandIns;
let path: string;
/** Everything nr sends to the API passes here, so a test can read every byte of it. */
let proxy: Awaited<ReturnType<typeof platformProxy>>;
const seen: Seen[] = [];

beforeAll(async () => {
  machine = await agentMachine("nr-e2e-", TOKEN);
  ({ kubeconfig, emulator, home, stand, path } = machine);
  proxy = await platformProxy(emulator.url, (req, body) =>
    seen.push({
      method: req.method ?? "",
      url: req.url ?? "",
      headers: JSON.stringify(req.headers),
      body: body.toString(),
    }),
  );
});

afterAll(async () => {
  await proxy?.close();
  await machine?.stop();
});

const registerArgs = (name: string, root: string, extra: string[] = []) =>
  machine.registerArgs({ name, apiUrl: proxy.url, root }, extra);

const envFor = (nrHomeDir: string): Record<string, string> => ({ NR_HOME: nrHomeDir, ...machine.env(CANARY) });

async function allFiles(dir: string): Promise<string> {
  let text = "";
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), "utf8").catch(() => "");
  }
  return text;
}

const readState = async (nrHomeDir: string) =>
  JSON.parse(await readFile(join(nrHomeDir, "state.json"), "utf8")) as {
    status: string;
    phases: Record<string, { state: string; runs: number; finishedAt?: string; outputs?: Record<string, unknown> }>;
  };

describe("nr cluster register, end to end", () => {
  it("runs the ten phases with the real commands, and the Proxmox secret goes only into the Secret", async () => {
    const nr = join(home.path, "e2e");
    const root = await hostRoot(join(home.path, "e2e-host"), { hostname: "pve-e2e" });
    // A namespace to offload that holds a Secret and a ServiceAccount of its own.
    await kubectl(kubeconfig, ["create", "namespace", "tenant-vms"]);
    await kubectl(kubeconfig, [
      "create",
      "secret",
      "generic",
      "app-creds",
      "-n",
      "tenant-vms",
      "--from-literal=token=canary-tenant-3b1d",
    ]);
    await kubectl(kubeconfig, ["create", "serviceaccount", "worker", "-n", "tenant-vms"]);
    // The credentials Secret as an earlier nr left it: client-side applied, so its
    // last-applied-configuration annotation holds the secret in plaintext.
    await kubectl(kubeconfig, ["create", "namespace", "proxmox-operator"]);
    await kubectlApply(kubeconfig, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "proxmox-credentials", namespace: "proxmox-operator" },
      stringData: { tokenSecret: CANARY },
    });
    const before = (await stand.records()).length;
    const result = await home.nr([...registerArgs("pve-e2e", root), "-v", "--json-logs"], {
      env: envFor(nr),
      timeoutMs: 200_000,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^agent pve-e2e \([0-9a-f-]{36}\) registered: 10 phases ran, 0 kept, 0 skipped/);

    const records = (await stand.records()).slice(before);
    const k3s = records.find((r) => r.tool === "k3s-install");
    expect(k3s?.argv).toEqual([
      "server",
      "--flannel-backend=none",
      "--disable-network-policy",
      "--cluster-cidr=10.42.0.0/16",
      `--service-cidr=${SERVICE_CIDR}`,
      "--node-name=pve-e2e",
      "--disable=traefik",
    ]);
    expect(k3s?.env.INSTALL_K3S_VERSION).toBe(emulator.pins.tools.k3s.version);
    const install = records.find((r) => r.tool === "liqoctl" && r.argv[0] === "install");
    expect(install?.argv).toEqual([
      "install",
      "k3s",
      "--kubeconfig",
      kubeconfig,
      "--cluster-id",
      "pve-e2e",
      "--pod-cidr",
      "10.42.0.0/16",
      "--service-cidr",
      SERVICE_CIDR,
      "--version",
      "v1.0.1",
      // Where NodeRings reaches this cluster (the default route's address), the node subnet and
      // NodeRings' ranges reserved (item 4).
      "--api-server-url",
      "https://10.20.0.11:6443",
      "--reserved-subnets",
      "10.20.0.0/24,10.100.0.0/16,10.101.0.0/16,10.70.0.0/16",
      "--set",
      "offloading.reflection.secret.type=AllowList",
      "--set",
      "virtualKubelet.extra.args={--enable-apiserver-support=false}",
      "--timeout",
      "60s",
      "--skip-confirm",
    ]);
    const peer = records.find((r) => r.tool === "liqoctl" && r.argv[0] === "peer");
    expect(peer?.argv).toEqual(
      expect.arrayContaining([
        "--gw-server-service-type",
        "NodePort",
        "--gw-server-service-port",
        "51840",
        "--in-band",
      ]),
    );
    // The one-time peering kubeconfig existed (0600, with its token) while liqoctl ran, and is gone since.
    expect(peer?.kubeconfigs?.remote).toMatchObject({ mode: 0o600, hasToken: true });
    await expect(access(join(nr, "run", "noderings-peering.kubeconfig"))).rejects.toThrow();
    // The reverse direction (item 3): nr ran liqoctl peer itself, NodeRings the consumer with the
    // one-time consumer credential it issued (0600, with its token, while liqoctl ran; gone
    // since), this cluster the provider with its own kubeconfig, which no request carried.
    const reverse = records.find((r) => r.tool === "liqoctl" && r.argv[0] === "peer" && r.argv[4] === kubeconfig);
    expect(reverse?.argv.slice(0, 5)).toEqual([
      "peer",
      "--kubeconfig",
      join(nr, "run", "noderings-consumer.kubeconfig"),
      "--remote-kubeconfig",
      kubeconfig,
    ]);
    expect(reverse?.argv).toEqual(expect.arrayContaining(["--gw-server-service-location", "Consumer", "--in-band"]));
    expect(reverse?.kubeconfigs?.local).toMatchObject({ mode: 0o600, hasToken: true });
    await expect(access(join(nr, "run", "noderings-consumer.kubeconfig"))).rejects.toThrow();
    const foreign = JSON.parse(
      await kubectl(kubeconfig, ["get", "foreignclusters.core.liqo.io/noderings-emulator", "-o", "json"]),
    );
    expect(foreign.status.role).toBe("ConsumerAndProvider");
    const agentKey = /client-key-data:\s*(\S+)/.exec(await readFile(kubeconfig, "utf8"))?.[1];
    expect(agentKey).toBeDefined();
    for (const request of seen) expect(request.body).not.toContain(agentKey);
    expect(seen.some((r) => r.method === "POST" && r.url.endsWith("/peering/inbound/complete"))).toBe(true);

    const offloads = records
      .filter((r) => r.tool === "liqoctl" && r.argv[0] === "offload")
      .map((r) => r.argv.slice(0, 3).join(" "));
    expect(offloads).toEqual(["offload namespace nr-vnc-gateway", "offload namespace tenant-vms"]);
    // Liqo was installed with reflection restricted: nothing of the offloaded namespaces reached
    // NodeRings' cluster, neither their Secrets nor their ServiceAccount tokens (item 2).
    expect(await stand.reflected()).toEqual([]);

    // The k3s phase finished with its node NotReady (no CNI yet); Calico brought Ready (item 1).
    const node = JSON.parse(await kubectl(kubeconfig, ["get", "node/pve-e2e", "-o", "json"]));
    expect(node.status.conditions.find((c: { type: string }) => c.type === "Ready").status).toBe("True");

    // Calico: the Installation's IP pool is the pod CIDR, and Liqo's interfaces are skipped.
    const installation = JSON.parse(
      await kubectl(kubeconfig, ["get", "installations.operator.tigera.io/default", "-o", "json"]),
    );
    expect(installation.spec.calicoNetwork.ipPools[0].cidr).toBe("10.42.0.0/16");
    expect(installation.spec.calicoNetwork.nodeAddressAutodetectionV4).toEqual({ skipInterface: "liqo.*" });
    // traefik off, ServiceLB kept with container IP forwarding for its pods (item 10).
    expect(installation.spec.calicoNetwork.containerIPForwarding).toBe("Enabled");
    expect(
      await kubectl(kubeconfig, ["get", "deployment/tigera-operator", "-n", "tigera-operator", "-o", "name"]),
    ).toContain("tigera-operator");

    // The operator: the Secret first, holding the credentials; the chart references it by name only.
    const secret = JSON.parse(
      await kubectl(kubeconfig, ["get", "secret/proxmox-credentials", "-n", "proxmox-operator", "-o", "json"]),
    );
    expect(Buffer.from(secret.data.tokenSecret, "base64").toString()).toBe(CANARY);
    // Applied server-side, and the earlier client-side copy removed: no plaintext copy of the
    // secret in its metadata (item 10).
    expect(secret.metadata.annotations?.["kubectl.kubernetes.io/last-applied-configuration"]).toBeUndefined();
    expect(JSON.stringify(secret)).not.toContain(CANARY);
    const values = await kubectl(kubeconfig, [
      "get",
      "configmap/proxmox-operator",
      "-n",
      "proxmox-operator",
      "-o",
      "jsonpath={.data.credentialsSecret}",
    ]);
    expect(values).toBe("proxmox-credentials");
    const helmValues = execFileSync(
      "helm",
      ["get", "values", "proxmox-operator", "-n", "proxmox-operator", "--kubeconfig", kubeconfig, "-o", "json"],
      { encoding: "utf8", env: { ...process.env, PATH: path, HOME: home.path } },
    );
    expect(JSON.parse(helmValues)).toEqual({ credentials: { existingSecret: "proxmox-credentials" } });

    // The platform: agent Ready after the verify phase's report, both peerings established, offloading reported.
    const api = createNodeRingsClient({ baseUrl: emulator.url, token: TOKEN });
    const agent = await api.getAgentByName("pve-e2e");
    expect(agent.state).toBe("Ready");
    const peering = await api.getPeeringStatus(agent.id);
    expect([peering.outbound.state, peering.inbound.state]).toEqual(["Established", "Established"]);
    expect((await api.getOffloadingTargets(agent.id)).offloaded).toEqual(["nr-vnc-gateway", "tenant-vms"]);

    // The canary reached nothing but the Secret: no API request, no state, no file in ~/.nr, no log line.
    for (const request of seen) expect(`${request.url} ${request.headers} ${request.body}`).not.toContain(CANARY);
    expect(seen.some((r) => r.method === "POST" && r.url.endsWith("/health-reports"))).toBe(true);
    expect(await allFiles(nr)).not.toContain(CANARY);
    // Neither one-time token (peering user, consumer credential) is kept anywhere in ~/.nr.
    expect(await allFiles(nr)).not.toContain("nrpu_");
    expect(result.stdout).not.toContain(CANARY);
    expect(result.stderr).not.toContain(CANARY);
    expect(result.stderr).not.toContain(TOKEN);
    expect(result.stderr).toContain('"event":"progress"');

    const status = await home.nr(["cluster", "status", "-o", "json"], { env: envFor(nr) });
    const report = JSON.parse(status.stdout);
    expect(report).toMatchObject({
      status: "succeeded",
      operatorInstalled: true,
      agent: { name: "pve-e2e", id: agent.id },
    });
    expect(report.phases.map((p: { state: string }) => p.state)).toEqual(REGISTER_PHASES.map(() => "done"));
    expect(report.pins.versions.helm).toBe(machine.pins.tools.helm.version);

    // Run again with --resume: every phase is re-checked by its probe and kept; nothing is redone.
    const count = (await stand.records()).length;
    const again = await home.nr([...registerArgs("pve-e2e", root), "--resume"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("0 phases ran, 10 kept");
    expect((await stand.records()).length).toBe(count);
    // The network plan is fixed once k3s ran: another pod CIDR is refused, and k3s is not re-run (item 4).
    const k3sBefore = await stand.k3sConfig();
    const moved = await home.nr([...registerArgs("pve-e2e", root), "--resume", "--pod-cidr", "10.50.0.0/16"], {
      env: envFor(nr),
    });
    expect(moved.exitCode).toBe(5);
    expect(moved.stderr).toContain("is not the pod CIDR k3s was installed with, 10.42.0.0/16");
    expect(await stand.k3sConfig()).toEqual(k3sBefore);
    // The same name again (without --resume) never makes a second agent.
    expect((await api.getAgentByName("pve-e2e")).id).toBe(agent.id);
  }, 300_000);

  it("outbound-peer run again on a registered machine (--from-phase): verify passes, now and on every --resume", async () => {
    const nr = join(home.path, "again");
    const root = await hostRoot(join(home.path, "again-host"), { hostname: "pve-again" });
    const first = await home.nr(registerArgs("pve-again", root), { env: envFor(nr), timeoutMs: 110_000 });
    expect(first.exitCode, first.stderr).toBe(0);
    // Given a link where the one-time peering kubeconfig goes, to a file of another user's
    const other = otherUser();
    await mkdir(join(home.path, "victim"), { recursive: true });
    const victim = join(home.path, "victim", "notes.txt");
    await writeFile(victim, "theirs\n");
    if (other.user !== undefined) await chown(victim, other.user.uid, other.user.gid);
    await symlink(victim, join(nr, "run", "noderings-peering.kubeconfig"));

    // When the outbound peering runs again on the registered machine
    const again = await home.nr([...registerArgs("pve-again", root), "--from-phase", "outbound-peer"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });

    // Then the inbound phase tells NodeRings the outbound side is up again, and verify passes
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("5 phases ran, 5 kept");
    const api = createNodeRingsClient({ baseUrl: emulator.url, token: TOKEN });
    const agent = await api.getAgentByName("pve-again");
    const peering = await api.getPeeringStatus(agent.id);
    expect([peering.outbound.state, peering.inbound.state]).toEqual(["Established", "Established"]);
    expect(agent.state).toBe("Ready");
    // And the token went nowhere near the other user's file (the link was removed, not followed)
    expect(await readFile(victim, "utf8")).toBe("theirs\n");
    expect(again.stderr).toContain("removed what a run that was killed left in");
    // And a resume keeps everything
    const resume = await home.nr([...registerArgs("pve-again", root), "--resume"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });
    expect(resume.exitCode, resume.stderr).toBe(0);
    expect(resume.stdout).toContain("0 phases ran, 10 kept");
  }, 240_000);

  it("a machine whose outbound peering was left Pending by an earlier nr is repaired by --resume", async () => {
    const nr = join(home.path, "repair");
    const root = await hostRoot(join(home.path, "repair-host"), { hostname: "pve-repair" });
    const first = await home.nr(registerArgs("pve-repair", root), { env: envFor(nr), timeoutMs: 110_000 });
    expect(first.exitCode, first.stderr).toBe(0);
    // Given what an outbound request with no inbound request after it leaves: outbound Pending
    const api = createNodeRingsClient({ baseUrl: emulator.url, token: TOKEN });
    const agent = await api.getAgentByName("pve-repair");
    await api.startOutboundPeering(agent.id, {
      clusterId: "pve-repair",
      liqoVersion: emulator.pins.tools.liqo.version,
      podCIDR: "10.42.0.0/16",
      serviceCIDR: SERVICE_CIDR,
    });
    expect((await api.getPeeringStatus(agent.id)).outbound.state).toBe("Pending");

    // When the machine is resumed
    const resume = await home.nr([...registerArgs("pve-repair", root), "--resume"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });

    // Then the inbound phase's probe sees it and runs again, alone: the operator and verify are
    // still in place and kept (no cascade, item 5)
    expect(resume.exitCode, resume.stderr).toBe(0);
    expect(resume.stdout).toContain("1 phases ran, 9 kept");
    const peering = await api.getPeeringStatus(agent.id);
    expect([peering.outbound.state, peering.inbound.state]).toEqual(["Established", "Established"]);
  }, 240_000);

  it("one thing gone on resume is redone alone: Calico's operator deleted re-runs Calico, and no new peering (item 5)", async () => {
    const nr = join(home.path, "cascade");
    const root = await hostRoot(join(home.path, "cascade-host"), { hostname: "pve-cascade" });
    const first = await home.nr(registerArgs("pve-cascade", root), { env: envFor(nr), timeoutMs: 110_000 });
    expect(first.exitCode, first.stderr).toBe(0);
    // Given Calico's operator gone: TigeraStatus calico is no longer Available
    await kubectl(kubeconfig, ["delete", "deployment/tigera-operator", "-n", "tigera-operator"]);
    await kubectl(kubeconfig, ["wait", "--for=condition=Available=False", "tigerastatus/calico", "--timeout=30s"]);
    const records = (await stand.records()).length;
    const outboundRequests = seen.filter((r) => r.url.endsWith("/peering/outbound")).length;

    // When the machine is resumed
    const resume = await home.nr([...registerArgs("pve-cascade", root), "--resume"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });

    // Then Calico alone runs again (its manifests re-applied, the operator back), and everything
    // after it is probed and kept: no Liqo install, no new peering asked for or run
    expect(resume.exitCode, resume.stderr).toBe(0);
    expect(resume.stdout).toContain("1 phases ran, 9 kept");
    await kubectl(kubeconfig, ["get", "deployment/tigera-operator", "-n", "tigera-operator"]);
    expect((await stand.records()).slice(records)).toEqual([]);
    expect(seen.filter((r) => r.url.endsWith("/peering/outbound")).length).toBe(outboundRequests);
    const state = await readState(nr);
    expect(state.phases.calico?.runs).toBe(2);
    expect(state.phases["outbound-peer"]?.runs).toBe(1);
  }, 240_000);

  it("verify judges the peering and the offloading on this cluster, not on NodeRings' word (item 9)", async () => {
    const nr = join(home.path, "verify");
    const root = await hostRoot(join(home.path, "verify-host"), { hostname: "pve-verify" });
    const first = await home.nr(registerArgs("pve-verify", root), { env: envFor(nr), timeoutMs: 110_000 });
    expect(first.exitCode, first.stderr).toBe(0);
    const passed = (await readState(nr)).phases.verify?.outputs?.checks as Array<{ id: string; result: string }>;
    expect(passed.filter((c) => c.id.startsWith("liqo-") || c.id.startsWith("offloading"))).toEqual([
      { id: "liqo-installed", result: "pass" },
      {
        id: "liqo-peering-role",
        result: "pass",
        message: "ForeignCluster noderings-emulator has role ConsumerAndProvider",
      },
      { id: "liqo-network", result: "pass" },
      { id: "liqo-auth", result: "pass" },
      { id: "liqo-virtual-node", result: "pass", message: "node/noderings-emulator" },
      { id: "liqo-info", result: "pass" },
      { id: "offloading", result: "pass", message: "offloaded: nr-vnc-gateway, tenant-vms" },
      { id: "offloading-reported", result: "pass" },
    ]);

    // Given this cluster's side broken while NodeRings still reports everything Established and
    // offloaded: the reverse peering's Tenant gone (role Provider, no AuthTenantStatus), the
    // tunnel down, the virtual node gone, an offloaded namespace's NamespaceOffloading gone, and
    // a Liqo pod that is not ready
    await kubectl(kubeconfig, [
      "patch",
      "foreignclusters.core.liqo.io/noderings-emulator",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({
        status: {
          role: "Provider",
          modules: {
            networking: {
              enabled: true,
              conditions: [{ type: "NetworkConnectionStatus", status: "Error", message: "tunnel down" }],
            },
            authentication: {
              enabled: true,
              conditions: [{ type: "AuthIdentityControlPlaneStatus", status: "Ready" }],
            },
            offloading: { enabled: true, conditions: [] },
          },
        },
      }),
    ]);
    await kubectl(kubeconfig, ["delete", "node/noderings-emulator"]);
    await kubectl(kubeconfig, ["delete", "namespaceoffloadings.offloading.liqo.io/offloading", "-n", "tenant-vms"]);
    await kubectl(kubeconfig, ["create", "serviceaccount", "default", "-n", "liqo"]).catch(() => "");
    await kubectlApply(kubeconfig, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "liqo-controller-manager-x", namespace: "liqo" },
      spec: {
        containers: [{ name: "controller-manager", image: "ghcr.io/liqotech/liqo-controller-manager:v1.0.1" }],
      },
    });
    const api = createNodeRingsClient({ baseUrl: emulator.url, token: TOKEN });
    const agent = await api.getAgentByName("pve-verify");
    const peering = await api.getPeeringStatus(agent.id);
    expect([peering.outbound.state, peering.inbound.state]).toEqual(["Established", "Established"]);

    // When verify runs again
    const verify = await home.nr([...registerArgs("pve-verify", root), "--resume", "--only-phase", "verify"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });

    // Then it fails, naming each of them, and NodeRings hears the agent failed its checks
    expect(verify.exitCode, verify.stderr).toBe(1);
    for (const line of [
      "liqo-peering-role: ForeignCluster noderings-emulator has role Provider, not ConsumerAndProvider (both peerings)",
      "liqo-network: NetworkConnectionStatus Error (tunnel down)",
      "liqo-auth: AuthTenantStatus missing (want Ready)",
      "liqo-virtual-node: no node labelled liqo.io/type=virtual-node for noderings-emulator",
      "liqo-info: Liqo is unhealthy (pods not ready: liqo-controller-manager-x); networkingStatus Unhealthy",
      "offloading: not offloaded on this cluster: tenant-vms (no NamespaceOffloading)",
    ]) {
      expect(verify.stderr).toContain(line);
    }
    expect(verify.stderr).not.toContain("peering-inbound:");
    expect((await api.getAgentByName("pve-verify")).state).not.toBe("Ready");

    // And running the peering phases again repairs what the checks named
    await kubectl(kubeconfig, ["delete", "pod/liqo-controller-manager-x", "-n", "liqo", "--grace-period=0", "--force"]);
    const repair = await home.nr([...registerArgs("pve-verify", root), "--from-phase", "outbound-peer"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });
    expect(repair.exitCode, repair.stderr).toBe(0);
  }, 240_000);

  it("--dry-run prints exactly the calls the real run then makes", async () => {
    const nr = join(home.path, "plan");
    const root = await hostRoot(join(home.path, "plan-host"), { hostname: "pve-plan" });
    // With the agent known, every parameter of every call is known before anything runs.
    const api = createNodeRingsClient({ baseUrl: emulator.url, token: TOKEN });
    await api.ensureAgent({ name: "pve-plan", architecture: "amd64" });
    const env = { ...envFor(nr), HOME: home.path };
    const previousPath = process.env.PATH;
    process.env.PATH = path;
    try {
      const options = {
        name: "pve-plan",
        apiUrl: emulator.url,
        kubeconfig,
        hostRoot: root,
        calicoManifests: join(FIXTURES, "calico"),
        operatorChart: join(FIXTURES, "proxmox-operator"),
        offload: ["tenant-vms"],
        serviceCidr: SERVICE_CIDR,
        skipPrechecks: false,
        offline: false,
        skipOperator: false,
        resume: false,
        restart: false,
        skipPhases: [],
        waitSeconds: 60,
        pollMs: 100,
        env,
        runner: createExecaRunner(),
        version: "0.0.0-test",
        warn: () => {},
        debug: () => {},
      };
      const dry = await register({ ...options, dryRun: true, redactor: new Redactor() });
      if (dry.kind !== "plan") throw new Error("expected a plan");
      const planned = planCallLines(dry.planned.plan);
      expect(planned.length).toBeGreaterThan(10);
      const recording = createRecordingRunner({ inner: createExecaRunner() });
      const real = await register({ ...options, dryRun: false, redactor: new Redactor(), planRunner: recording });
      expect(real.kind).toBe("done");
      expect(recording.calls.map((call) => call.line)).toEqual(planned);
    } finally {
      process.env.PATH = previousPath;
    }
  }, 120_000);

  it("kill -9 at each phase boundary, then --resume: it completes, and nothing done is redone", async () => {
    const nr = join(home.path, "kill");
    const root = await hostRoot(join(home.path, "kill-host"), { hostname: "pve-kill" });
    const bin = join(repoRoot, "apps/nr/bin/run.js");
    const snapshots: Array<Record<string, { runs: number; finishedAt?: string }>> = [];
    let refusedStale = false;
    for (const phase of REGISTER_PHASES.slice(0, -1)) {
      const args = [...registerArgs("pve-kill", root), ...(snapshots.length > 0 ? ["--resume"] : [])];
      if (snapshots.length === 1 && !refusedStale) {
        // The killed run left its lock: a resume is refused, with how to clear it; the lock stays.
        const refused = await home.nr(args, { env: envFor(nr) });
        expect(refused.exitCode).toBe(5);
        expect(refused.stderr).toContain("which is no longer running");
        expect(refused.stderr).toContain("--break-lock");
        refusedStale = true;
      }
      const child: ChildProcess = spawn(
        process.execPath,
        [bin, ...args, ...(snapshots.length > 0 ? ["--break-lock"] : [])],
        {
          env: { HOME: home.path, NO_COLOR: "1", ...envFor(nr) },
          stdio: ["ignore", "ignore", "pipe"],
          // Its own process group: the kill takes nr and whatever it runs at that moment, as a crash would.
          detached: true,
        },
      );
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
      let stderr = "";
      await new Promise<void>((resolve, reject) => {
        child.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes(`[${phase}] done`)) {
            process.kill(-(child.pid ?? 0), "SIGKILL");
            resolve();
          }
        });
        child.on("exit", () => reject(new Error(`nr exited before ${phase} was done:\n${stderr}`)));
      });
      await exited;
      const state = await readState(nr);
      expect(state.phases[phase]?.state).toBe("done");
      snapshots.push(
        Object.fromEntries(
          Object.entries(state.phases)
            .filter(([, p]) => p.state === "done")
            .map(([id, p]) => [
              id,
              { runs: p.runs, ...(p.finishedAt === undefined ? {} : { finishedAt: p.finishedAt }) },
            ]),
        ),
      );
    }
    const last = await home.nr([...registerArgs("pve-kill", root), "--resume", "--break-lock"], {
      env: envFor(nr),
      timeoutMs: 110_000,
    });
    expect(last.exitCode, last.stderr).toBe(0);
    const final = await readState(nr);
    expect(final.status).toBe("succeeded");
    expect(REGISTER_PHASES.map((id) => final.phases[id]?.state)).toEqual(REGISTER_PHASES.map(() => "done"));
    // No phase done at a kill ran again afterwards.
    for (const snapshot of snapshots) {
      for (const [id, done] of Object.entries(snapshot)) {
        expect({ id, runs: final.phases[id]?.runs, finishedAt: final.phases[id]?.finishedAt }).toEqual({ id, ...done });
      }
    }
    const installs = (await stand.records()).filter(
      (r) => r.tool === "k3s-install" && r.argv.includes("--node-name=pve-kill"),
    );
    // Once, or twice when the kill right after prechecks caught the installer already started.
    expect(installs.length).toBeGreaterThanOrEqual(1);
    expect(installs.length).toBeLessThanOrEqual(2);
  }, 300_000);
});
