// @runs-long 310 s (ansible-playbook over ten agent clusters): started before the other files, see tooling/testenv/src/sequencer.ts.
import { createHash } from "node:crypto";
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type RunningNodeRingsEmulator, startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import {
  type AgentVm,
  agentVm,
  CALICO_MANIFESTS,
  hostRoot,
  OPERATOR_CHART,
  pinTestbinHelm,
  REGISTER_PHASES,
  type Recorded,
} from "@nodekit/nr-standins";
import { tempDir } from "@nodekit/test-utils";
import { type ControlPlane, startControlPlane } from "@nodekit/testenv";
import { startControllerStandIn } from "@nodekit/testenv/controller-standin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Ansible, buildCollection, nrLauncher, type PlayResult, playbook, taskResults } from "./ansible.ts";

// The nodekit.nr collection's register role over a fleet: ten hosts on this machine
// (ansible_connection=local), each a provider VM of its own — its own NR_HOME, nr lock, host
// root (the files nr's prechecks read) and agent cluster (a real kube-apiserver and etcd, with
// the strict stand-ins for the k3s installer, liqoctl and Calico's operator, tooling/nr-standins)
// — registering against one NodeRings emulator. The role downloads nr from a server on
// 127.0.0.1 and checks its SHA-256; two more hosts fail (a wrong digest, a revoked token).
// Four plays, each assertion of docs/fleets.md's "How it is tested" in one of them: check mode
// on the fresh fleet, the registration, a second run in serial batches (the no-change run and
// the batches at once), and check mode on the registered fleet with nr_reset's.

const TOKEN = "nr-ansible-fleet-token-41c9";
const FLEET = Array.from({ length: 10 }, (_, i) => `pve-${String(i + 1).padStart(2, "0")}`);
const BROKEN = ["broken-digest", "broken-token"];

interface Host {
  name: string;
  dir: string;
  plane?: ControlPlane;
  vm?: AgentVm;
}

let dir: { path: string; cleanup: () => Promise<void> };
let ansible: Ansible;
let emulator: RunningNodeRingsEmulator;
let server: Server;
const hosts: Host[] = [];
let play: string;
let reset: string;
let inventory: string;

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

async function startHost(name: string, index: number, nrUrl: string, sha256: string): Promise<Record<string, unknown>> {
  const hostDir = join(dir.path, "hosts", name);
  await mkdir(hostDir, { recursive: true });
  const address = `10.20.${index + 1}.11`;
  const root = await hostRoot(hostDir, { hostname: name, address });
  const host: Host = { name, dir: hostDir };
  hosts.push(host);
  const tokenFile = join(hostDir, "api-token");
  await writeFile(tokenFile, `${name === "broken-token" ? "nr-ansible-revoked-token-0000" : TOKEN}\n`, { mode: 0o600 });
  const credentials = join(hostDir, "pve.yaml");
  await writeFile(
    credentials,
    `url: https://pve-${index}.example:8006/api2/json\ntokenId: root@pam!nr\ntokenSecret: pve-secret-${name}-canary\n`,
    { mode: 0o600 },
  );
  let path = process.env.PATH ?? "";
  let kubeconfig = join(hostDir, "no-cluster.kubeconfig");
  if (!BROKEN.includes(name)) {
    // Five starting at once on a shared 2-core machine can take longer than the default minute.
    host.plane = await startControlPlane({ readyTimeoutMs: 300_000 });
    kubeconfig = host.plane.adminKubeconfigPath;
    // Calico's operator stand-in retries a failed watch after a second, as the sandbox runs it:
    // ten of them share the machine.
    host.vm = await agentVm(hostDir, {
      kubeconfig,
      binDir: host.plane.binDir,
      nodeIp: address,
      calicoRetryMs: 1_000,
    });
    path = host.vm.path;
  }
  return {
    nr_url: nrUrl,
    nr_sha256: name === "broken-digest" ? "0".repeat(64) : sha256,
    nr_install_path: join(hostDir, "bin", "nr"),
    nr_home: join(hostDir, "nr"),
    nr_register_name: name,
    nr_api_url: emulator.url,
    nr_api_token_file: tokenFile,
    nr_proxmox_credentials: credentials,
    // PID 1 is not systemd where the tests run.
    nr_ignore_prechecks: ["init"],
    nr_register_options: {
      kubeconfig,
      host_root: root,
      api_server_url: `https://${name}.fleet.test:6443`,
      calico_manifests: CALICO_MANIFESTS,
      operator_chart: OPERATOR_CHART,
      // The test tier's kube-apiserver serves this range (as k3s would serve --service-cidr).
      service_cidr: "10.0.0.0/24",
      // nr's own default is 2s; each poll is a kubectl, and twelve hosts share two cores.
      poll_interval: "1s",
      timeout: "120s",
    },
    // What sets this host apart on one machine: its own HOME, nr lock and programs.
    nr_env: {
      HOME: hostDir,
      XDG_CACHE_HOME: join(hostDir, "cache"),
      NR_LOCK_DIR: join(hostDir, "lock"),
      PATH: path,
    },
  };
}

beforeAll(async () => {
  dir = await tempDir("nr-ansible-fleet-");
  ansible = await buildCollection(dir.path);
  emulator = await startNodeRingsEmulator({ tokens: [TOKEN], timing: { inboundMs: 300 }, requestLogLimit: 100_000 });
  const nr = await nrLauncher(join(dir.path, "nr-linux-x64"));
  const content = await readFile(nr);
  const sha256 = createHash("sha256").update(content).digest("hex");
  server = createServer((req, res) => {
    if (req.url === "/releases/nr-linux-x64") res.writeHead(200).end(content);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const nrUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/releases/nr-linux-x64`;

  const names = [...BROKEN, ...FLEET];
  const vars: Record<string, Record<string, unknown>> = {};
  const started = performance.now();
  // Five agent clusters at a time: each is a kube-apiserver and an etcd starting.
  for (let i = 0; i < names.length; i += 5) {
    const batch = names.slice(i, i + 5);
    const batchVars = await Promise.all(batch.map((name, j) => startHost(name, i + j, nrUrl, sha256)));
    batch.forEach((name, j) => {
      vars[name] = batchVars[j] ?? {};
    });
  }
  console.log(`${FLEET.length} agent clusters started: ${((performance.now() - started) / 1000).toFixed(1)}s`);
  // The platform pins the helm the test tier has, so the operator phase uses it.
  pinTestbinHelm(emulator, hosts.find((host) => host.plane !== undefined)?.plane?.binDir ?? "");

  inventory = join(dir.path, "inventory.json");
  await writeFile(
    inventory,
    JSON.stringify({
      all: {
        vars: { ansible_connection: "local", ansible_python_interpreter: join(ansible.binDir, "python") },
        children: {
          broken: { hosts: Object.fromEntries(BROKEN.map((name) => [name, vars[name]])) },
          fleet: { hosts: Object.fromEntries(FLEET.map((name) => [name, vars[name]])) },
        },
      },
    }),
  );
  play = join(dir.path, "register.yml");
  reset = join(dir.path, "reset.yml");
  await writeFile(
    play,
    `- name: Register the fleet
  hosts: "{{ target | default('all') }}"
  serial: "{{ batch | default(omit) }}"
  gather_facts: false
  environment: "{{ nr_env }}"
  roles:
    - nodekit.nr.register
  tasks:
    - name: batch
      ansible.builtin.debug:
        msg: "{{ ansible_play_batch }}"
`,
  );
}, 600_000);

afterAll(async () => {
  for (const host of hosts) host.vm?.stop();
  await Promise.all(hosts.map((host) => host.plane?.stop()));
  await new Promise((resolve) => server?.close(resolve));
  await emulator?.stop();
  await dir?.cleanup();
});

const REGISTER = "nodekit.nr.register : Register the host";
const DOWNLOAD = "nodekit.nr.register : Download nr, checked against its SHA-256";

/** Every call the stand-ins recorded, per host (in the order of `hosts`). */
function records(): Promise<Recorded[][]> {
  return Promise.all(hosts.map(async (host) => (await host.vm?.stand.records()) ?? []));
}

function changedHosts(result: PlayResult, task: string): string[] {
  return Object.entries(taskResults(result, task))
    .filter(([, value]) => value.changed === true)
    .map(([name]) => name)
    .sort();
}

/**
 * Since `calls` and the emulator's request `before`: the probes read the clusters, but nothing
 * was installed, peered or offloaded again and no agent was created; a kept registration
 * writes only verify's health report.
 */
async function expectNothingActed(calls: Recorded[][], before: number): Promise<void> {
  const acted = (await records())
    .flatMap((list, i) => list.slice(calls[i]?.length ?? 0))
    .filter((record) => record.tool === "k3s-install" || ["install", "peer", "offload"].includes(record.argv[0] ?? ""));
  expect(acted).toEqual([]);
  const writes = emulator.requests.slice(before).filter((request) => request.method !== "GET");
  expect(writes.filter((request) => !request.path.endsWith("/health-reports"))).toEqual([]);
  expect(Object.keys(emulator.state.agents)).toHaveLength(FLEET.length);
}

const mutating = () => emulator.requests.filter((request) => request.method !== "GET").length;

describe("the nodekit.nr.register role over ten hosts", () => {
  it("check mode on the fresh fleet changes nothing: no nr installed, no state, no agent, no call", async () => {
    const result = await playbook(ansible, ["-i", inventory, play, "--check", "--forks", "5"], {
      cwd: dir.path,
      timeoutMs: 300_000,
    });
    expect(result.report.stats["broken-digest"]?.failed, result.stdout).toBe(0);
    for (const name of FLEET) {
      expect(await exists(join(dir.path, "hosts", name, "bin", "nr"))).toBe(false);
      expect(await exists(join(dir.path, "hosts", name, "nr", "state.json"))).toBe(false);
    }
    expect(mutating()).toBe(0);
    expect((await records()).flat()).toEqual([]);
  }, 300_000);

  it("registers every host (changed = 10) with forks 5, and the two broken hosts fail alone", async () => {
    const result = await playbook(ansible, ["-i", inventory, play, "--forks", "5"], {
      cwd: dir.path,
      timeoutMs: 900_000,
    });
    console.log(`ansible-playbook, 10 hosts registering (+2 failing), forks 5: ${(result.ms / 1000).toFixed(1)}s`);
    expect(result.exitCode, result.stdout.slice(-4000)).toBe(2);
    expect(changedHosts(result, REGISTER)).toEqual(FLEET);
    for (const name of FLEET) {
      expect(result.report.stats[name], name).toMatchObject({ failed: 0, unreachable: 0 });
      expect(taskResults(result, REGISTER)[name]?.phases_ran).toEqual(REGISTER_PHASES);
      expect(
        taskResults(result, "nodekit.nr.register : Read the registration's state (the nr_status fact)")[name],
      ).toMatchObject({
        registered: true,
        ansible_facts: { nr_status: { status: "succeeded", agent: { name } } },
      });
    }
    // The wrong digest: get_url refused the download, and nothing was installed.
    expect(result.report.stats["broken-digest"]).toMatchObject({ failed: 1 });
    expect(String(taskResults(result, DOWNLOAD)["broken-digest"]?.msg)).toContain("checksum");
    expect(await exists(join(dir.path, "hosts", "broken-digest", "bin", "nr"))).toBe(false);
    // The revoked token: nr's error code, exit code and message.
    expect(taskResults(result, REGISTER)["broken-token"]).toMatchObject({
      error_code: "NODERINGS_UNAUTHORIZED",
      exit_code: 7,
    });
    // Every agent is in NodeRings, once, and Ready; no token or Proxmox secret reached the output.
    const agents = Object.values(emulator.state.agents);
    expect(agents.map((record) => record.agent.name).sort()).toEqual(FLEET);
    expect(agents.map((record) => record.agent.state)).toEqual(FLEET.map(() => "Ready"));
    expect(result.stdout).not.toContain(TOKEN);
    expect(result.stdout).not.toContain("-canary");
  }, 900_000);

  it("a second run, in serial batches of four, changes nothing (changed = 0); the broken hosts fail alone in their batches", async () => {
    const calls = await records();
    const before = emulator.requests.length;
    const again = await playbook(ansible, ["-i", inventory, play, "--forks", "5", "-e", "batch=4"], {
      cwd: dir.path,
      timeoutMs: 600_000,
    });
    console.log(
      `ansible-playbook, 10 hosts registered already (no change; +2 failing), serial 4, forks 5: ${(again.ms / 1000).toFixed(1)}s`,
    );
    expect(again.exitCode, again.stdout.slice(-4000)).toBe(2);
    for (const name of FLEET) expect(again.report.stats[name], name).toMatchObject({ changed: 0, failed: 0 });
    for (const name of BROKEN) expect(again.report.stats[name], name).toMatchObject({ changed: 0, failed: 1 });
    expect(changedHosts(again, REGISTER)).toEqual([]);
    const batches = taskResults(again, "batch");
    const order = [...BROKEN, ...FLEET];
    const expected = [order.slice(0, 4), order.slice(4, 8), order.slice(8, 12)];
    for (const [i, batch] of expected.entries()) {
      for (const name of batch) {
        // A host that failed ran no later task, and leaves its batch; the others report the batch they ran in.
        if (BROKEN.includes(name)) expect(batches[name]).toBeUndefined();
        else expect(batches[name]?.msg, `${name} in batch ${i + 1}`).toEqual(batch.filter((n) => !BROKEN.includes(n)));
      }
    }
    await expectNothingActed(calls, before);
  }, 900_000);

  it("check mode on registered hosts changes nothing, and nr_reset's check mode plans the reset", async () => {
    // One host of each serial batch (the fresh fleet's check ran on all twelve): each such play
    // re-checks every phase on every host, minutes on a shared machine.
    const checked = ["pve-01", "pve-05", "pve-10"];
    const calls = await records();
    const before = emulator.requests.length;
    await writeFile(
      reset,
      `- name: Reset
  hosts: pve-10
  gather_facts: false
  environment: "{{ nr_env }}"
  tasks:
    - name: reset
      nodekit.nr.nr_reset:
        nr_path: "{{ nr_install_path }}"
        nr_home: "{{ nr_home }}"
        api_token: ${TOKEN}
        calico_manifests: "{{ nr_register_options.calico_manifests }}"
        timeout: 120s
`,
    );
    // Both playbooks in one ansible-playbook run: the fleet's check, then the reset's.
    const check = await playbook(
      ansible,
      ["-i", inventory, play, reset, "--forks", "5", "--limit", checked.join(","), "--check"],
      {
        cwd: dir.path,
        timeoutMs: 600_000,
      },
    );
    expect(check.exitCode, check.stdout.slice(-4000)).toBe(0);
    expect(Object.keys(taskResults(check, REGISTER)).sort()).toEqual(checked);
    expect(changedHosts(check, REGISTER)).toEqual([]);
    for (const name of checked) {
      expect(check.report.stats[name], name).toMatchObject({ changed: name === "pve-10" ? 1 : 0, failed: 0 });
    }
    expect(taskResults(check, "reset")["pve-10"]).toMatchObject({ changed: true, plan: { kind: "Plan" } });
    expect(await exists(join(dir.path, "hosts", "pve-10", "nr", "state.json"))).toBe(true);
    await expectNothingActed(calls, before);
  }, 900_000);

  it("nr_reset on one host undoes its registration, and the others keep theirs", async () => {
    const host = hosts.find((h) => h.name === "pve-10");
    const kubeconfig = host?.plane?.adminKubeconfigPath ?? "";
    // Its namespaces phase waits for the namespace controller, which a bare kube-apiserver lacks:
    // the controller manager's stand-in finalizes deleted namespaces, as apps/nr's day-2 test runs it.
    const controllers = startControllerStandIn(kubeconfig);
    const calls = (await host?.vm?.stand.records())?.length ?? 0;
    try {
      const result = await playbook(ansible, ["-i", inventory, reset, "--limit", "pve-10"], {
        cwd: dir.path,
        timeoutMs: 600_000,
      });
      expect(result.exitCode, result.stdout.slice(-4000)).toBe(0);
      expect(taskResults(result, "reset")["pve-10"]).toMatchObject({ changed: true });
    } finally {
      await controllers.stop();
    }
    // The registration's state is archived, k3s uninstalled, the agent deregistered; the others are there.
    expect(await exists(join(dir.path, "hosts", "pve-10", "nr", "state.json"))).toBe(false);
    const ran = ((await host?.vm?.stand.records()) ?? []).slice(calls);
    expect(ran.map((record) => record.tool)).toContain("k3s-uninstall");
    expect(
      Object.values(emulator.state.agents)
        .map((record) => record.agent.name)
        .sort(),
    ).toEqual(FLEET.filter((name) => name !== "pve-10"));
  }, 900_000);
});
