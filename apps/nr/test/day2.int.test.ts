import { execFileSync } from "node:child_process";
import { access, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createNodeRingsClient } from "@nodekit/noderings-api";
import type { RunningNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { planCallLines } from "@nodekit/plan";
import { createExecaRunner, createRecordingRunner, Redactor } from "@nodekit/process";
import { type ControllerStandIn, startControllerStandIn } from "@nodekit/testenv/controller-standin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reset } from "../src/services/reset.ts";
import { type AgentMachine, agentMachine, platformProxy } from "./agent-fixture.ts";
import { FIXTURES, hostRoot, kubectl, type NrHome } from "./helpers.ts";

// nr's day 2 end to end (support-bundle, status --live, reset), after a real registration: the NodeRings emulator as the
// platform (behind a proxy a test can take down), the test tier's real kube-apiserver as the
// agent cluster, real kubectl and helm, the strict stand-ins for the k3s installer (and the
// k3s-uninstall.sh it writes) and liqoctl (unoffload, unpeer with both kubeconfigs,
// uninstall --purge refused while a peering or an offloaded namespace remains).

// Every secret carries a canary a test looks for everywhere it must not be.
const TOKEN = "nr-day2-api-token-canary-3f9d";
const CANARY = "canary-5c1d-reset-proxmox-secret-9e7a";

let machine: AgentMachine;
let kubeconfig: string;
let emulator: RunningNodeRingsEmulator;
let home: NrHome;
/** NodeRings as nr reaches it; `proxyDown` makes it unreachable (connections reset). */
let proxy: Awaited<ReturnType<typeof platformProxy>>;
let proxyDown = false;
const bodies: string[] = [];
let controllers: ControllerStandIn;

beforeAll(async () => {
  machine = await agentMachine("nr-reset-", TOKEN);
  ({ kubeconfig, emulator, home } = machine);
  proxy = await platformProxy(
    emulator.url,
    (req, body) => bodies.push(`${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body.toString()}`),
    () => proxyDown,
  );
  // Namespaces deleted by the reset are finalized, as kube-controller-manager would.
  controllers = startControllerStandIn(kubeconfig);
});

afterAll(async () => {
  await controllers?.stop();
  await proxy?.close();
  await machine?.stop();
});

const envFor = (nrHomeDir: string): Record<string, string> => ({ NR_HOME: nrHomeDir, ...machine.env(CANARY) });

async function registerMachine(name: string, nrHomeDir: string): Promise<void> {
  const root = await hostRoot(join(home.path, `${name}-host`), { hostname: name });
  await kubectl(kubeconfig, ["create", "namespace", "tenant-vms"]).catch(() => "exists");
  const result = await home.nr(machine.registerArgs({ name, apiUrl: proxy.url, root }), {
    env: envFor(nrHomeDir),
    timeoutMs: 110_000,
  });
  expect(result.exitCode, result.stderr).toBe(0);
}

const resetArgs = ["cluster", "reset", "--timeout", "60s"];

const exists = (args: string[]) =>
  kubectl(kubeconfig, ["get", ...args, "-o", "name"]).then(
    (out) => out.trim() !== "",
    () => false,
  );

async function allFiles(dir: string): Promise<string> {
  let text = "";
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), "utf8").catch(() => "");
  }
  return text;
}

describe("nr cluster support-bundle", () => {
  it("one tar.gz with every part, and no secret: from any input path, in any command's output", async () => {
    const nr = join(home.path, "bundle");
    await registerMachine("pve-bundle", nr);
    // Given secrets where nr might pick them up: the API token only in ~/.nr/config.yaml (0600),
    // the Proxmox secret only in the cluster's Secret (not in the environment), and commands
    // that print them: a node annotation, and k3s and journalctl that echo every one of them
    // (with a kubeconfig token, an Authorization header, the one-time peering tokens' prefix)
    await writeFile(join(nr, "config.yaml"), `apiUrl: ${proxy.url}\ntoken: ${TOKEN}\n`, { mode: 0o600 });
    await kubectl(kubeconfig, ["annotate", "node/pve-bundle", `leak=${CANARY}`, "--overwrite"]);
    const noisy = join(home.path, "noisy-bin");
    await mkdir(noisy, { recursive: true });
    const leak = `echo "proxmox ${CANARY} api ${TOKEN}"; echo "  token: abcdefghijklmnop"; echo "Authorization: Bearer nrpu_zzzzzzzzzzzz"`;
    await writeFile(join(noisy, "k3s"), `#!/bin/sh\necho "k3s check-config: $*"\n${leak}\n`, { mode: 0o755 });
    await writeFile(join(noisy, "journalctl"), `#!/bin/sh\necho "journal: $*"\n${leak}\n`, { mode: 0o755 });
    const { NR_API_TOKEN: _token, NR_PROXMOX_TOKEN_SECRET: _secret, ...env } = envFor(nr);
    const out = join(home.path, "bundle.tar.gz");

    // When the bundle is written
    const result = await home.nr(["cluster", "support-bundle", "--output", out, "--journal-lines", "50"], {
      env: { ...env, PATH: `${noisy}:${machine.path}` },
      timeoutMs: 60_000,
    });

    // Then it is one 0600 archive with every part
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(`wrote ${out}`);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const unpacked = join(home.path, "bundle-unpacked");
    await mkdir(unpacked, { recursive: true });
    execFileSync("tar", ["-xzf", out, "-C", unpacked]);
    const [top] = await readdir(unpacked);
    const files = (await readdir(join(unpacked, top ?? ""))).sort();
    expect(files).toEqual([
      "helm-status.json",
      "host.json",
      "index.json",
      "k3s-check-config.txt",
      "k3s-journal.txt",
      "last-run.log",
      "liqoctl-info.json",
      "nodes.json",
      "pins.json",
      "state.json",
      "tigerastatus.json",
    ]);
    const read = (file: string) => readFile(join(unpacked, top ?? "", file), "utf8");
    expect(JSON.parse(await read("liqoctl-info.json")).local.clusterID).toBe("pve-bundle");
    expect(JSON.parse(await read("helm-status.json")).info.status).toBe("deployed");
    expect(
      JSON.parse(await read("nodes.json")).items.map((n: { metadata: { name: string } }) => n.metadata.name),
    ).toContain("pve-bundle");
    expect(JSON.parse(await read("pins.json")).versions.liqo).toBe("v1.0.1");
    expect(await read("k3s-check-config.txt")).toContain("k3s check-config: check-config");
    expect(await read("k3s-journal.txt")).toContain("journal: -u k3s --no-pager -n 50");
    expect(await read("last-run.log")).toContain('"type":"run-finished"');
    expect(JSON.parse(await read("state.json")).status).toBe("succeeded");
    // And no secret in any file, whichever way it came in
    const everything = (await Promise.all(files.map(read))).join("\n");
    for (const secret of [CANARY, TOKEN, "abcdefghijklmnop", "nrpu_"]) expect(everything).not.toContain(secret);
    expect(everything).toContain("[REDACTED]");
    expect(result.stderr).not.toContain(CANARY);
    // And a second bundle to the same file is refused, the first one kept
    const again = await home.nr(["cluster", "support-bundle", "--output", out], {
      env: { ...env, PATH: `${noisy}:${machine.path}` },
    });
    expect(again.exitCode).toBe(5);
    expect(again.stderr).toContain("nothing was overwritten");
  }, 180_000);
});

describe("nr cluster status --live", () => {
  it("checks the running machine read-only: healthy passes; Calico gone fails naming it; nothing is posted", async () => {
    const nr = join(home.path, "live");
    await registerMachine("pve-live", nr);
    const writes = () => bodies.filter((b) => !b.startsWith("GET ")).length;
    const before = writes();

    const healthy = await home.nr(["cluster", "status", "--live", "-o", "json"], {
      env: envFor(nr),
      timeoutMs: 60_000,
    });
    expect(healthy.exitCode, healthy.stderr).toBe(0);
    const report = JSON.parse(healthy.stdout);
    expect(report.live.result).toBe("pass");
    expect(report.live.checks.map((c: { id: string }) => c.id)).toEqual([
      "k3s-api",
      "k3s-node",
      "calico-ready",
      "node-ready",
      "liqo-installed",
      "liqo-foreign-cluster",
      "liqo-reverse-peering",
      "operator",
      "operator-credentials",
      "peering-outbound",
      "peering-inbound",
      "offloading",
      "offloading-reported",
    ]);

    // Given Calico's operator gone
    await kubectl(kubeconfig, ["delete", "deployment/tigera-operator", "-n", "tigera-operator"]);
    await kubectl(kubeconfig, ["wait", "--for=condition=Available=False", "tigerastatus/calico", "--timeout=30s"]);
    const broken = await home.nr(["cluster", "status", "--live"], { env: envFor(nr), timeoutMs: 60_000 });
    expect(broken.exitCode).toBe(1);
    expect(broken.stdout).toMatch(/calico-ready\s+FAIL\s+Calico is not Available/);
    expect(broken.stderr).toContain("1 of 13 live checks failed: calico-ready");
    // Nothing was posted, put or deleted at NodeRings, and the state is as it was
    expect(writes()).toBe(before);
    expect(JSON.parse(await readFile(join(nr, "state.json"), "utf8")).status).toBe("succeeded");
    // Without --live, status talks to nothing and exits 0
    expect((await home.nr(["cluster", "status"], { env: envFor(nr) })).exitCode).toBe(0);
  }, 180_000);
});

describe("nr cluster reset, after a real registration", () => {
  it("removes, in reverse, everything the registration recorded, and nothing is left; the dry run printed every call", async () => {
    const nr = join(home.path, "full");
    await registerMachine("pve-reset", nr);
    const api = createNodeRingsClient({ baseUrl: emulator.url, token: TOKEN });
    const agent = await api.getAgentByName("pve-reset");
    const before = (await machine.stand.records()).length;
    // The offloading created nr-vnc-gateway (labelled as nr's) and recorded it; tenant-vms was there before
    const registered = JSON.parse(await readFile(join(nr, "state.json"), "utf8"));
    expect(registered.phases.offloading.outputs.created).toEqual(["nr-vnc-gateway"]);
    const managedBy = (namespace: string) =>
      kubectl(kubeconfig, [
        "get",
        "namespace",
        namespace,
        "-o",
        "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}",
      ]);
    expect(await managedBy("nr-vnc-gateway")).toBe("nr");
    expect(await managedBy("tenant-vms")).toBe("");

    // The dry run prints every call and changes nothing (the same decision the run makes)
    const env = { ...envFor(nr), HOME: home.path };
    const previousPath = process.env.PATH;
    process.env.PATH = machine.path;
    let planned: string[];
    const recording = createRecordingRunner({ inner: createExecaRunner() });
    try {
      // No --calico-manifests: the reset deletes with the manifests the registration recorded
      const options = {
        force: false,
        waitSeconds: 60,
        env,
        runner: createExecaRunner(),
        version: "0.0.0-test",
        debug: () => {},
      };
      const dry = await reset({ ...options, dryRun: true, redactor: new Redactor() });
      if (dry.kind !== "plan") throw new Error("expected a plan");
      planned = planCallLines(dry.planned.plan);
      expect(planned.filter((line) => line.includes(" delete -f "))).toEqual([
        expect.stringContaining(`delete -f ${join(FIXTURES, "calico")}/`),
        expect.stringContaining(`delete -f ${join(FIXTURES, "calico")}/`),
      ]);
      // Only the namespace nr created is deleted, after both were unoffloaded
      expect(planned.filter((line) => line.includes("delete namespace nr-vnc-gateway"))).toHaveLength(1);
      expect(planned.filter((line) => line.includes("delete namespace") && line.includes("tenant-vms"))).toEqual([]);
      expect((await machine.stand.records()).length).toBe(before);
      await access(join(nr, "state.json"));

      // When the machine is reset
      const done = await reset({ ...options, dryRun: false, redactor: new Redactor(), planRunner: recording });
      if (done.kind !== "done") throw new Error("expected a run");
      expect(done.result.ran).toEqual([
        "unoffload",
        "namespaces",
        "unpeer",
        "liqo",
        "operator",
        "calico",
        "k3s",
        "deregister",
        "archive",
      ]);
      expect(done.left).toEqual([]);
    } finally {
      process.env.PATH = previousPath;
    }
    // Then the run made exactly the calls the dry run printed
    expect(recording.calls.map((call) => call.line)).toEqual(planned);

    // Then the stand-ins saw the reverse of the registration, in order
    const records = (await machine.stand.records()).slice(before);
    expect(records.map((r) => `${r.tool} ${r.argv.slice(0, 3).join(" ")}`)).toEqual([
      "liqoctl unoffload namespace nr-vnc-gateway",
      "liqoctl unoffload namespace tenant-vms",
      `liqoctl unpeer --kubeconfig ${join(nr, "run", "noderings-unpeer-consumer.kubeconfig")}`,
      `liqoctl unpeer --kubeconfig ${kubeconfig}`,
      "liqoctl uninstall --purge --kubeconfig",
      "k3s-uninstall ",
    ]);
    // Each unpeer had NodeRings' one-time credential in a 0600 file, gone since
    const [reverse, outbound] = records.filter((r) => r.argv[0] === "unpeer");
    expect(reverse?.kubeconfigs?.local).toMatchObject({ mode: 0o600, hasToken: true });
    expect(outbound?.kubeconfigs?.remote).toMatchObject({ mode: 0o600, hasToken: true });
    expect(await readdir(join(nr, "run"))).not.toContain("noderings-unpeer.kubeconfig");
    expect(await readdir(join(nr, "run"))).not.toContain("noderings-unpeer-consumer.kubeconfig");

    // Nothing nr created is left: no peering, no Liqo CRDs, no operator, Secret or namespace,
    // no Calico resources or operator, no node; the agent is gone from NodeRings
    expect(await exists(["crd/foreignclusters.core.liqo.io"])).toBe(false);
    expect(await exists(["node/noderings-emulator"])).toBe(false);
    expect(await exists(["node/pve-reset"])).toBe(false);
    expect(await exists(["namespace/proxmox-operator"])).toBe(false);
    expect(await exists(["crd/installations.operator.tigera.io"])).toBe(false);
    expect(await exists(["deployment/tigera-operator", "-n", "tigera-operator"])).toBe(false);
    expect(await machine.stand.k3sConfig()).toBeUndefined();
    await expect(access(join(machine.stand.bin, "k3s-uninstall.sh"))).rejects.toThrow();
    expect(await api.findAgentByName("pve-reset")).toBeUndefined();
    expect(bodies.some((b) => b.startsWith(`DELETE /api/v1/agents/${agent.id}`))).toBe(true);
    // The namespace nr created for the offloading is deleted; the one that was there before
    // (--offload-namespace tenant-vms) was unoffloaded, and kept
    expect(await exists(["namespace/nr-vnc-gateway"])).toBe(false);
    expect(await exists(["namespace/tenant-vms"])).toBe(true);

    // The registration's state is archived with the reset's, and status has nothing to show
    await expect(access(join(nr, "state.json"))).rejects.toThrow();
    const [archived] = await readdir(join(nr, "archive"));
    expect((await readdir(join(nr, "archive", archived ?? ""))).sort()).toEqual(["reset-state.json", "state.json"]);
    const status = await home.nr(["cluster", "status", "-o", "json"], { env: envFor(nr) });
    expect(JSON.parse(status.stdout).status).toBe("none");
    // No secret anywhere in ~/.nr: not the Proxmox one, no one-time credential
    expect(await allFiles(nr)).not.toContain(CANARY);
    expect(await allFiles(nr)).not.toContain("nrpu_");

    // A second reset has nothing recorded to remove
    const again = await home.nr(resetArgs, { env: envFor(nr) });
    expect(again.exitCode).toBe(9);
    expect(again.stderr).toContain("nothing to reset");
  }, 240_000);

  it("NodeRings unreachable: the reset stops at unpeer (resumable); --force removes this side, keeps a reused agent", async () => {
    const nr = join(home.path, "force");
    // Given an agent that existed before the machine registered
    const api = createNodeRingsClient({ baseUrl: emulator.url, token: TOKEN });
    const { agent } = await api.ensureAgent({ name: "pve-force", architecture: "amd64" });
    await registerMachine("pve-force", nr);
    const before = (await machine.stand.records()).length;

    // When NodeRings cannot be reached, the reset stops at unpeer, saying how to go on
    proxyDown = true;
    try {
      const stopped = await home.nr(resetArgs, { env: envFor(nr), timeoutMs: 110_000 });
      expect(stopped.exitCode, stopped.stderr).toBe(6);
      expect(stopped.stderr).toContain("nr cluster reset --force");
      expect(stopped.stderr).toContain("continues there");
      const state = JSON.parse(await readFile(join(nr, "reset-state.json"), "utf8"));
      expect(state.phases.unoffload.state).toBe("done");
      expect(state.phases.namespaces.state).toBe("done");
      expect(state.phases.unpeer.state).toBe("failed");
      // The registration's state is still where it was: nothing was archived
      await access(join(nr, "state.json"));

      // And with --force it continues where it stopped: unoffload is not redone
      const forced = await home.nr([...resetArgs, "--force"], { env: envFor(nr), timeoutMs: 110_000 });
      expect(forced.exitCode, forced.stderr).toBe(0);
      expect(forced.stdout).toContain("6 phases ran, 2 kept, 1 skipped");
      expect(forced.stderr).toContain("the agent's peering in NodeRings is left");
    } finally {
      proxyDown = false;
    }
    const records = (await machine.stand.records()).slice(before);
    expect(records.filter((r) => r.argv[0] === "unoffload")).toHaveLength(2);
    // No unpeer could run (it needs NodeRings' credentials): this side's peering was deleted
    expect(records.filter((r) => r.argv[0] === "unpeer")).toEqual([]);
    expect(await exists(["crd/foreignclusters.core.liqo.io"])).toBe(false);
    expect(await exists(["node/noderings-emulator"])).toBe(false);
    // The agent existed before: it is kept (and NodeRings still has its peering, as the warning said)
    expect((await api.getAgent(agent.id)).id).toBe(agent.id);
    const state = JSON.parse(
      await readFile(join(nr, "archive", (await readdir(join(nr, "archive")))[0] ?? "", "reset-state.json"), "utf8"),
    );
    expect(state.phases.deregister).toMatchObject({ state: "skipped" });
    expect(state.phases.deregister.reason).toContain("existed before this machine registered");
  }, 300_000);
});
