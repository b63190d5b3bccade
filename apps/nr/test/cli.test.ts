import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { exists, repoRoot } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { hostRoot, REGISTER_PHASES, registerArgv, useEmulatorHome } from "./helpers.ts";

// nr as a user runs it — the built binary, as a subprocess — against the NodeRings
// emulator, for everything that is decided before a cluster is touched: help, status,
// bad input, the API's failures, the lock, the dry run.

const TOKEN = "nr-cli-test-token";
const fx = useEmulatorHome("nr-cli-", TOKEN);

const base = (extra: string[] = []) => registerArgv(fx.emulator.url, fx.root, extra);
/** The dry run of register with `extra`, the operator's install left out. */
const dryRun = (env: Record<string, string | undefined>, extra: string[]) =>
  fx.home.nr(base([...extra, "--skip-operator-install", "--dry-run"]), { env });

const AT = "2025-10-01T12:00:00.000Z";

/**
 * Writes a register run's state.json into env's NR_HOME: the agent phase done (`agentId`,
 * `name`), prechecks skipped, then `phases`; `network` goes into its meta when given.
 */
async function writeRunState(
  env: Record<string, string>,
  state: { status: string; agentId: string; name: string; phases?: object; network?: object },
) {
  const hash = `sha256:${"a".repeat(64)}`;
  const { status, agentId, name, phases, network } = state;
  await writeFile(
    join(env.NR_HOME as string, "state.json"),
    JSON.stringify({
      apiVersion: "phase-runner.nodekit.dev/v1",
      kind: "RunState",
      name: "nr cluster register",
      runId: "r1",
      createdAt: AT,
      updatedAt: AT,
      status,
      phases: {
        agent: { state: "done", finishedAt: AT, inputsHash: hash, outputs: { agentId, name }, runs: 1 },
        prechecks: { state: "skipped", reason: "--skip-prechecks", runs: 0 },
        ...phases,
      },
      meta: { agent: { name }, api: fx.emulator.url, ...(network ? { network } : {}) },
    }),
    { mode: 0o600 },
  );
}

/** A fresh ~/.nr for one test. */
async function fresh(name: string): Promise<Record<string, string>> {
  const nr = join(fx.home.path, name);
  await mkdir(nr, { recursive: true });
  return { NR_HOME: nr, NR_API_TOKEN: TOKEN, NR_LOCK_DIR: fx.home.lockDir };
}

describe("help", () => {
  it("lists the ten phases in order, from the list that drives the run", async () => {
    const result = await fx.home.nr(["cluster", "register", "--help"]);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split("\n").filter((line) => /^\s+\d+\. /.test(line));
    expect(lines.map((line) => line.trim().split(/\s+/)[1])).toEqual(REGISTER_PHASES);
  });
});

describe("nr cluster status", () => {
  it("says so when there is no registration yet", async () => {
    const env = await fresh("status-none");
    const table = await fx.home.nr(["cluster", "status"], { env });
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toContain("No registration on this machine yet");
    expect(table.stdout).toContain("Next:     nr cluster register --name NAME --api-url URL");
    const json = await fx.home.nr(["cluster", "status", "-o", "json"], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ status: "none", next: "agent" });
  });

  it("reads an interrupted run's state: what is done, where it stopped, how to continue", async () => {
    const env = await fresh("status-interrupted");
    await writeRunState(env, { status: "running", agentId: "a1", name: "vm-1" });
    const result = await fx.home.nr(["cluster", "status"], { env });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("Status:   interrupted");
    expect(result.stdout).toMatch(/2\s+prechecks\s+SKIPPED\s+--skip-prechecks/);
    expect(result.stdout).toMatch(/3\s+k3s\s+PENDING/);
    expect(result.stdout).toContain("VMs cannot be sold");
    expect(result.stdout).toContain("Next:     nr cluster register --resume");
    const yaml = await fx.home.nr(["cluster", "status", "-o", "yaml"], { env });
    expect(yaml.stdout).toContain("status: interrupted");
  });

  it("a corrupt or hand-edited state file is refused with its line, exit 3, and left as it is", async () => {
    const env = await fresh("status-corrupt");
    const file = join(env.NR_HOME as string, "state.json");
    await writeFile(
      file,
      '{\n  "apiVersion": "phase-runner.nodekit.dev/v1",\n  "kind": "RunState",\n  "status": "maybe"\n}\n',
      { mode: 0o600 },
    );
    const status = await fx.home.nr(["cluster", "status"], { env });
    expect(status.exitCode).toBe(3);
    expect(status.stderr).toContain(`${file}:4: field status:`);
    const resume = await fx.home.nr(base(["--resume", "--skip-operator-install"]), { env });
    expect(resume.exitCode).toBe(3);
    expect(resume.stderr).toMatch(/the state file .* has \d+ problems?; nothing was changed/);
    expect(await readFile(file, "utf8")).toContain('"maybe"');
  });
});

describe("nr cluster register refuses bad input before it changes anything", () => {
  it("an unknown phase id names the known ones (exit 2)", async () => {
    const env = await fresh("unknown-phase");
    const result = await fx.home.nr(base(["--name", "vm-x", "--skip-phases", "agnet"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('there is no phase "agnet" (--skip-phases)');
    expect(result.stderr).toContain(`the phases are, in order: ${REGISTER_PHASES.join(", ")}`);
    // Nothing ran: no "phases before agnet are done", no --resume (issue 23, item 10).
    expect(result.stderr).not.toContain("--resume");
    expect(result.stderr).not.toContain("are done");
  });

  it("a namespace holding nr's Secret, or a system one, is never offloaded: refused before anything, --dry-run too (exit 2)", async () => {
    const env = await fresh("offload-unsafe");
    const before = fx.emulator.requests.length;
    for (const [namespace, why] of [
      ["proxmox-operator", "proxmox-operator holds the Secret proxmox-credentials with the Proxmox credentials"],
      ["kube-system", "kube-system is a system namespace"],
      ["liqo-tenant-x", "liqo-tenant-x is a system namespace"],
    ] as const) {
      for (const dry of [[], ["--dry-run"]]) {
        const result = await fx.home.nr(
          base(["--name", "vm-x", "--offload-namespace", `tenant-a,${namespace}`, ...dry]),
          {
            env,
          },
        );
        expect(result.exitCode, result.stderr).toBe(2);
        expect(result.stderr).toContain(why);
        expect(result.stderr).toContain("Liqo reflects the Secrets of an offloaded namespace");
      }
    }
    expect(fx.emulator.requests.length).toBe(before);
    expect(await exists(join(env.NR_HOME as string, "state.json"))).toBe(false);
  });

  it("no --name or --agent-id (exit 2)", async () => {
    const env = await fresh("no-name");
    const result = await fx.home.nr(base(["--skip-operator-install"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("--name NAME");
  });

  it("a --timeout that is not a duration is a usage error (exit 2), worded as nvkectl words it", async () => {
    const env = await fresh("bad-timeout");
    const result = await fx.home.nr(base(["--name", "vm-x", "--timeout", "soon"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: --timeout "soon" is not a duration');
    expect(result.stderr).toContain(
      "next: give it as a number with a unit, as kubectl does: --timeout 90s, --timeout 10m, --timeout 1h30m",
    );
  });

  it("a secret on the command line is refused and never echoed", async () => {
    const env = await fresh("secret-argv");
    const result = await fx.home.nr(base(["--name", "vm-x", "--proxmox-token-secret", "s3cr3t-on-argv"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("--proxmox-token-secret is not accepted");
    expect(`${result.stdout}${result.stderr}`).not.toContain("s3cr3t-on-argv");
  });

  it("an agent name the API refuses: its message verbatim (exit 8), nothing recorded as done", async () => {
    const env = await fresh("reserved");
    const result = await fx.home.nr(base(["--name", "admin", "--skip-operator-install"]), { env });
    expect(result.exitCode).toBe(8);
    expect(result.stderr).toMatch(/error: agent: .*reserved/);
    // The first phase: no phase before it to call done (issue 23, item 10).
    expect(result.stderr).toContain("next: no phase is done yet (the failure is recorded in");
    expect(result.stderr).not.toContain("the phases before agent");
    expect(result.stderr).toContain("nr cluster register --resume");
    const state = JSON.parse(await readFile(join(env.NR_HOME as string, "state.json"), "utf8"));
    expect(state.phases.agent.state).toBe("failed");
    // The refused name is not the machine's agent: status does not show it, and another name
    // is taken on --resume without --restart (issue 23, item 10).
    const status = await fx.home.nr(["cluster", "status", "-o", "json"], { env });
    expect(JSON.parse(status.stdout).agent).toEqual({});
    const other = await dryRun(env, ["--name", "vm-accepted", "--resume"]);
    expect(other.exitCode, other.stderr).toBe(0);
    expect(other.stdout).toContain("# create agent vm-accepted (amd64");
  });

  it("no token: nothing is sent (exit 7)", async () => {
    const env = { ...(await fresh("no-token")), NR_API_TOKEN: "" };
    const before = fx.emulator.requests.length;
    const result = await fx.home.nr(base(["--name", "vm-x", "--skip-operator-install"]), { env });
    expect(result.exitCode).toBe(7);
    expect(fx.emulator.requests.length).toBe(before);
  });

  it("a config file holding the token that others may read is refused", async () => {
    const env = await fresh("config-mode");
    const config = join(env.NR_HOME as string, "config.yaml");
    await writeFile(config, `apiUrl: ${fx.emulator.url}\ntoken: ${TOKEN}\n`, { mode: 0o644 });
    const result = await fx.home.nr(["cluster", "register", "--name", "vm-x", "--dry-run", "--host-root", fx.root], {
      env: { NR_HOME: env.NR_HOME },
    });
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toContain(`chmod 600 ${config}`);
    expect(result.stderr).not.toContain(TOKEN);
  });
});

describe("one agent, one machine (issue 23, item 10)", () => {
  it("a second VM given an existing agent's --name does not take it over: refused (exit 5), nothing recorded; the first VM still reuses it", async () => {
    const first = await fresh("twin-a");
    const machineA = await hostRoot(join(fx.home.path, "twin-a-host"), {
      machineId: "0123456789abcdef0123456789abcdef",
    });
    const machineB = await hostRoot(join(fx.home.path, "twin-b-host"), {
      machineId: "fedcba9876543210fedcba9876543210",
    });
    const on = (machine: string, extra: string[]) => {
      const args = base(["--name", "vm-twin", "--only-phase", "agent", ...extra]);
      args[args.indexOf(fx.root)] = machine;
      return args;
    };
    const made = await fx.home.nr(on(machineA, []), { env: first });
    expect(made.exitCode, made.stderr).toBe(0);
    const listed = await fetch(`${fx.emulator.url}/api/v1/agents?name=vm-twin`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const agent = ((await listed.json()) as { items: Array<{ id: string; machineId?: string }> }).items[0];
    // NodeRings holds a keyed hash of /etc/machine-id, never the id itself.
    expect(agent?.machineId).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(fx.emulator.requests)).not.toContain("0123456789abcdef0123456789abcdef");

    const second = await fresh("twin-b");
    for (const extra of [[], ["--dry-run"]]) {
      const taken = await fx.home.nr(on(machineB, extra), { env: second });
      expect(taken.exitCode, taken.stderr).toBe(5);
      expect(taken.stderr).toContain(
        `agent vm-twin (${agent?.id}) was registered from another machine; nothing was done`,
      );
      expect(taken.stderr).toContain("register this machine under another --name");
    }
    const state = JSON.parse(await readFile(join(second.NR_HOME as string, "state.json"), "utf8"));
    expect(state.phases.agent.state).toBe("failed");

    // The first machine, with a new ~/.nr, reuses it.
    const again = await fx.home.nr(on(machineA, []), { env: await fresh("twin-a-again") });
    expect(again.exitCode, again.stderr).toBe(0);
  });
});

describe("the network plan (issue 23, item 4)", () => {
  /** A state in which the agent phase is done (for an agent of the emulator's) and, when asked, the k3s phase ran. */
  async function stateWith(env: Record<string, string>, name: string, network: object, k3sRan: boolean) {
    const api = await fetch(`${fx.emulator.url}/api/v1/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name }),
    });
    const agent = (await api.json()) as { id: string };
    const k3s = { state: "failed", startedAt: AT, finishedAt: AT, runs: 1, error: { code: "X", message: "x" } };
    await writeRunState(env, { status: "failed", agentId: agent.id, name, phases: k3sRan ? { k3s } : {}, network });
  }

  it("once k3s ran, --resume with another --pod-cidr is refused naming the recorded range; nothing is sent", async () => {
    const env = await fresh("network-fixed");
    await stateWith(env, "vm-net", { podCidr: "10.42.0.0/16", serviceCidr: "10.43.0.0/16" }, true);
    const before = fx.emulator.requests.length;
    const result = await fx.home.nr(base(["--resume", "--pod-cidr", "10.50.0.0/16", "--skip-operator-install"]), {
      env,
    });
    expect(result.exitCode, result.stderr).toBe(5);
    expect(result.stderr).toContain(
      "--pod-cidr 10.50.0.0/16 is not the pod CIDR k3s was installed with, 10.42.0.0/16; nothing was done",
    );
    expect(fx.emulator.requests.length).toBe(before);
  });

  it("a range not given is the one recorded; before k3s ran, another one may still be chosen", async () => {
    const env = await fresh("network-recorded");
    await stateWith(env, "vm-net-2", { podCidr: "10.44.0.0/16", serviceCidr: "10.45.0.0/16" }, false);
    const recordedPlan = await dryRun(env, ["--resume"]);
    expect(recordedPlan.exitCode, recordedPlan.stderr).toBe(0);
    expect(recordedPlan.stdout).toContain("--cluster-cidr=10.44.0.0/16 --service-cidr=10.45.0.0/16");
    const other = await dryRun(env, ["--resume", "--pod-cidr", "10.46.0.0/16"]);
    expect(other.exitCode, other.stderr).toBe(0);
    expect(other.stdout).toContain("--cluster-cidr=10.46.0.0/16 --service-cidr=10.45.0.0/16");
  });

  it("Liqo gets the API server URL NodeRings reaches and the node subnet reserved; without a default route, say so first", async () => {
    const env = await fresh("api-server-url");
    const plan = await dryRun(env, ["--name", "vm-url"]);
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      "--api-server-url https://10.20.0.11:6443 --reserved-subnets '10.20.0.0/24,<reserved CIDRs from NodeRings>'",
    );
    const named = await fx.home.nr(
      base([
        "--name",
        "vm-url",
        "--skip-operator-install",
        "--dry-run",
        "--api-server-url",
        "https://pve.example.net:6443",
      ]),
      { env },
    );
    expect(named.stdout).toContain("--tls-san=pve.example.net");
    expect(named.stdout).toContain("--api-server-url https://pve.example.net:6443");
    const local = await fx.home.nr(
      base(["--name", "vm-url", "--skip-operator-install", "--dry-run", "--api-server-url", "https://127.0.0.1:6443"]),
      { env },
    );
    expect(local.exitCode).toBe(2);
    // Without a default route: the dry run shows it, a run is refused before anything is done.
    const noRoute = await hostRoot(join(fx.home.path, "no-route"), { address: null });
    const args = base(["--name", "vm-url", "--skip-operator-install", "--kubeconfig", "/nonexistent"]);
    args[args.indexOf(fx.root)] = noRoute;
    const dry = await fx.home.nr([...args, "--dry-run"], { env });
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("--api-server-url '<--api-server-url: this machine has no default route>'");
    const before = fx.emulator.requests.length;
    const unknown = await fx.home.nr(args, { env });
    expect(unknown.exitCode).toBe(9);
    expect(unknown.stderr).toContain("give --api-server-url https://ADDRESS:6443");
    expect(fx.emulator.requests.slice(before).some((r) => r.method === "POST")).toBe(false);
    expect(await exists(join(env.NR_HOME as string, "state.json"))).toBe(false);
  });
});

describe("prechecks (issue 23, item 8)", () => {
  // Only the agent and the prechecks run: nothing is installed, no tool is asked for.
  const upToPrechecks = ["--skip-phases", REGISTER_PHASES.slice(2).join(",")];

  it("no systemd as PID 1 and a kubectl older than 1.31 on PATH: both named, exit 9, with the one flag to let each pass", async () => {
    const env = await fresh("prechecks-fail");
    const machine = await hostRoot(join(fx.home.path, "prechecks-fail-host"), { init: "bash" });
    // A distro's kubectl 1.28, first on PATH: it answers `kubectl version --client --output=json`.
    const bin = join(fx.home.path, "prechecks-old-kubectl");
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, "kubectl"), `#!/bin/sh\necho '{"clientVersion":{"gitVersion":"v1.28.2"}}'\n`, {
      mode: 0o755,
    });
    const args = base(["--name", "vm-pre", ...upToPrechecks]);
    args[args.indexOf(fx.root)] = machine;
    const pathEnv = { ...env, PATH: `${bin}:${process.env.PATH}` };

    const failed = await fx.home.nr(args, { env: pathEnv });
    expect(failed.exitCode, failed.stderr).toBe(9);
    expect(failed.stderr).toContain("found PID 1 is bash; requires systemd as PID 1");
    expect(failed.stderr).toContain(
      "found kubectl v1.28.2 on PATH; requires no kubectl on PATH, or kubectl 1.31 or newer",
    );
    expect(failed.stderr).toContain("--ignore-precheck init,kubectl");

    // When the operator lets one pass, the other still fails
    const one = await fx.home.nr([...args, "--resume", "--ignore-precheck", "init"], { env: pathEnv });
    expect(one.exitCode, one.stderr).toBe(9);
    expect(one.stderr).toContain("1 of");
    expect(one.stderr).toContain("--ignore-precheck kubectl");

    // Both: the phase passes, says what it let pass, and the state records it
    const both = await fx.home.nr([...args, "--resume", "--ignore-precheck", "init", "--ignore-precheck", "kubectl"], {
      env: pathEnv,
    });
    expect(both.exitCode, both.stderr).toBe(0);
    expect(both.stderr).toContain(
      "warning: precheck init failed and was let pass (--ignore-precheck): found PID 1 is bash",
    );
    const state = JSON.parse(await readFile(join(env.NR_HOME as string, "state.json"), "utf8"));
    expect(state.phases.prechecks.state).toBe("done");
    expect(state.phases.prechecks.outputs.ignored).toEqual([
      "init: found PID 1 is bash",
      "kubectl: found kubectl v1.28.2 on PATH",
    ]);
  });

  it("Calico's ports: BGP 179 in use is named (exit 9)", async () => {
    const env = await fresh("prechecks-bgp");
    // 00B3 is port 179, 0A LISTEN.
    const tcp = "   0: 00000000:00B3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31313 1\n";
    const machine = await hostRoot(join(fx.home.path, "prechecks-bgp-host"), { tcp });
    const args = base(["--name", "vm-pre-bgp", ...upToPrechecks]);
    args[args.indexOf(fx.root)] = machine;
    const result = await fx.home.nr(args, { env });
    expect(result.exitCode, result.stderr).toBe(9);
    expect(result.stderr).toContain("found 179/tcp in use; requires 179/tcp free for Calico's BGP");
  });

  it("the Liqo gateway server's port, when NodeRings asks this machine to run it behind a LoadBalancer", async () => {
    const own = await startNodeRingsEmulator({
      tokens: [TOKEN],
      platform: { gateway: { serverLocation: "Consumer", serviceType: "LoadBalancer", port: 51840, mtu: 1340 } },
    });
    try {
      const env = await fresh("prechecks-gateway");
      // CA80 is port 51840, bound (07) by a WireGuard of the machine's own.
      const udp =
        "  10: 00000000:CA80 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 22222 2\n";
      const machine = await hostRoot(join(fx.home.path, "prechecks-gateway-host"), { udp });
      const args = base(["--name", "vm-pre-gw", ...upToPrechecks]);
      args[args.indexOf(fx.root)] = machine;
      args[args.indexOf(fx.emulator.url)] = own.url;
      const result = await fx.home.nr(args, { env });
      expect(result.exitCode, result.stderr).toBe(9);
      expect(result.stderr).toContain(
        "found 51840/udp in use; requires 51840/udp free for Liqo's WireGuard gateway server (the outbound peering's, a LoadBalancer on this node)",
      );
      // Where NodeRings runs the server (this emulator's default), the same machine passes.
      const fine = await fx.home.nr(
        base(["--name", "vm-pre-gw", ...upToPrechecks]).map((a) => (a === fx.root ? machine : a)),
        {
          env: await fresh("prechecks-gateway-2"),
        },
      );
      expect(fine.exitCode, fine.stderr).toBe(0);
    } finally {
      await own.stop();
    }
  });

  it("--ignore-precheck with a name no check has: a usage error before anything is sent (exit 2)", async () => {
    const env = await fresh("prechecks-unknown");
    const before = fx.emulator.requests.length;
    const result = await fx.home.nr(base(["--name", "vm-pre-x", "--ignore-precheck", "init,systemd"]), { env });
    expect(result.exitCode, result.stderr).toBe(2);
    expect(result.stderr).toContain("--ignore-precheck systemd: there is no such precheck; nothing was done");
    expect(result.stderr).toContain("port-<number>-<tcp|udp>");
    expect(fx.emulator.requests.length).toBe(before);
  });
});

describe("the PATH advice (issue 23, item 10)", () => {
  it("is given whenever nr installed a tool into ~/.nr/bin, also when the run fails afterwards", async () => {
    const env = await fresh("path-advice");
    // liqoctl is downloaded (the emulator's, which only answers `version`), then its install fails.
    const result = await fx.home.nr(
      base([
        "--name",
        "vm-path-advice",
        "--skip-phases",
        "prechecks,k3s,calico",
        "--skip-operator-install",
        "--kubeconfig",
        "/nonexistent",
      ]),
      { env: { ...env, PATH: "/usr/bin:/bin" } },
    );
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain("error: liqo:");
    expect(await exists(join(env.NR_HOME as string, "bin", "liqoctl"))).toBe(true);
    expect(result.stderr).toContain(`export PATH="${join(env.NR_HOME as string, "bin")}:$PATH"`);
  });
});

describe("the API's failures", () => {
  it("an HTML 500 from a proxy (after the retries), exit 6, the page not the contract", async () => {
    const env = await fresh("html500");
    // The first request and its three retries.
    fx.emulator.chaos("html500", { count: 4 });
    const result = await dryRun(env, ["--name", "vm-x"]);
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toContain("HTTP 500, text/html");
  });

  it("429 with a Retry-After longer than nr waits, exit 6, saying how long", async () => {
    const env = await fresh("rate-limit");
    // An emulator of its own: a rate limiter refuses everything until the time it named.
    const limited = await startNodeRingsEmulator({ tokens: [TOKEN] });
    limited.chaos("rate-limit", { count: 1, retryAfterSeconds: 120 });
    const args = base(["--name", "vm-x", "--skip-operator-install", "--dry-run"]);
    args[args.indexOf(fx.emulator.url)] = limited.url;
    const result = await fx.home.nr(args, { env });
    await limited.stop();
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(/120 s/);
  });

  it("an API that does not answer in time, exit 6", async () => {
    const env = await fresh("hang");
    fx.emulator.chaos("hang", { count: 4 });
    const result = await fx.home.nr(base(["--name", "vm-x", "--skip-operator-install", "--dry-run"]), {
      env,
      timeoutMs: 120_000,
    });
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(/did not answer|within the deadline|in time/);
  }, 120_000);

  it("an API that cannot be reached, exit 6", async () => {
    const env = await fresh("unreachable");
    const result = await fx.home.nr(
      ["cluster", "register", "--api-url", "http://127.0.0.1:9", "--host-root", fx.root, "--name", "vm-x", "--dry-run"],
      { env },
    );
    expect(result.exitCode).toBe(6);
  });

  it("pins with a missing digest: located, exit 3, nothing downloaded", async () => {
    const env = await fresh("no-digest");
    const pins = structuredClone(fx.emulator.pins);
    delete pins.tools.liqoctl.artifacts?.amd64?.sha256;
    fx.emulator.setPins(pins);
    const before = fx.emulator.requests.length;
    const result = await fx.home.nr(base(["--name", "vm-x", "--skip-operator-install"]), { env });
    fx.emulator.setPins(undefined);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("field tools.liqoctl.artifacts.amd64.sha256: is missing");
    expect(fx.emulator.requests.slice(before).some((r) => r.path.startsWith("/artifacts/"))).toBe(false);
    expect(await exists(join(env.NR_HOME as string, "state.json"))).toBe(false);
  });

  it("a tool only the phases left out use is not asked for: its missing digest does not matter", async () => {
    const env = await fresh("no-digest-unused");
    const pins = structuredClone(fx.emulator.pins);
    delete pins.tools.liqoctl.artifacts?.amd64?.sha256;
    fx.emulator.setPins(pins);
    const result = await fx.home.nr(
      base([
        "--name",
        "vm-x",
        "--skip-operator-install",
        "--skip-phases",
        "liqo,outbound-peer,offloading,inbound-peering,verify",
        "--dry-run",
      ]),
      { env },
    );
    fx.emulator.setPins(undefined);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).not.toContain("liqoctl");
    expect(result.stdout).toContain("Liqo (skipped (--skip-phases))");
  });

  it("a tampered download fails the phase closed: nothing kept in ~/.nr/bin, the phase failed in the state", async () => {
    const env = await fresh("tampered");
    fx.emulator.artifactFault("tamper", { tool: "k3s-install" });
    const result = await fx.home.nr(
      base(["--name", "vm-tampered", "--skip-operator-install", "--kubeconfig", "/nonexistent"]),
      {
        env,
      },
    );
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain("does not match its pinned digest; nothing was kept");
    expect(await readdir(join(env.NR_HOME as string, "bin")).catch(() => [])).toEqual([]);
    const state = JSON.parse(await readFile(join(env.NR_HOME as string, "state.json"), "utf8"));
    expect(state.phases.k3s.state).toBe("failed");
    expect(state.phases.agent.state).toBe("done");
  });
});

describe("dry run", () => {
  it("prints every call in order, creates no agent and writes no state", async () => {
    const env = await fresh("dry-run");
    const result = await dryRun(env, ["--name", "vm-dry"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(
      result.stdout
        .split("\n")
        .filter((l) => l.startsWith("# ["))
        .map((l) => l.split(" ")[2]),
    ).toEqual(REGISTER_PHASES.map((id) => `${id}:`));
    expect(result.stdout).toContain(
      "sh " +
        join(env.NR_HOME as string, "bin/k3s-install.sh") +
        " server --flannel-backend=none --disable-network-policy --cluster-cidr=10.42.0.0/16 --service-cidr=10.43.0.0/16 --node-name=pve-node-1",
    );
    expect(result.stdout).toContain("skipped: --skip-operator-install");
    // k3s waits for its API and its node, not for Ready: without a CNI the node is NotReady
    // (k3s-io/k3s#12583). Ready is awaited after Calico (issue 23, item 1).
    const section = (id: string) =>
      result.stdout.split(/^# \[\d+\/10\] /m).find((part) => part.startsWith(`${id}:`)) ?? "";
    expect(section("k3s")).toContain("get --raw=/readyz");
    expect(section("k3s")).toContain("wait --for=create node/pve-node-1");
    expect(section("k3s")).not.toContain("--for=condition=Ready");
    expect(section("calico")).toMatch(
      /wait --for=condition=Available tigerastatus\/calico[^\n]*\n[^\n]*wait --for=condition=Ready node\/pve-node-1/,
    );
    const agents = await fetch(`${fx.emulator.url}/api/v1/agents?name=vm-dry`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await agents.json()) as { items: unknown[] }).items).toEqual([]);
    expect(await exists(join(env.NR_HOME as string, "state.json"))).toBe(false);
    const json = await fx.home.nr(base(["--name", "vm-dry", "--skip-operator-install", "--dry-run", "-o", "json"]), {
      env,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ apiVersion: "plan.nodekit.dev/v1", kind: "Plan" });
  });

  it("the node is named as k3s names it: the hostname lowercased, in --node-name and every wait (issue 23, item 10)", async () => {
    const env = await fresh("node-name");
    const machine = await hostRoot(join(fx.home.path, "node-name-host"), { hostname: "PVE-Node-7.Example.LOCAL" });
    const args = base(["--name", "vm-node-name", "--skip-operator-install", "--dry-run"]);
    args[args.indexOf(fx.root)] = machine;
    const result = await fx.home.nr(args, { env });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain("--node-name=pve-node-7.example.local");
    expect(result.stdout).toContain("wait --for=create node/pve-node-7.example.local");
    expect(result.stdout).toContain("wait --for=condition=Ready node/pve-node-7.example.local");
    expect(result.stdout).not.toContain("PVE-Node-7");
  });

  it("Calico's manifests are named as the pinned release names them (3.32 renamed the CRDs'; issue 23, item 10)", async () => {
    const own = await startNodeRingsEmulator({ tokens: [TOKEN] });
    try {
      const pins = structuredClone(own.pins);
      pins.tools.calico.version = "v3.32.0";
      own.setPins(pins);
      const env = await fresh("calico-3-32");
      const args = base(["--name", "vm-calico", "--skip-operator-install", "--dry-run"]);
      args[args.indexOf(fx.emulator.url)] = own.url;
      const result = await fx.home.nr(args, { env });
      expect(result.exitCode, result.stderr).toBe(0);
      const manifests = "https://raw.githubusercontent.com/projectcalico/calico/v3.32.0/manifests";
      expect(result.stdout).toContain(`-f ${manifests}/v1_crd_projectcalico_org.yaml`);
      expect(result.stdout).toContain(`-f ${manifests}/tigera-operator.yaml`);
      expect(result.stdout).not.toContain("operator-crds.yaml");
    } finally {
      await own.stop();
    }
  });

  it("--offline warns that the combination is not platform-validated and asks no pins", async () => {
    const env = await fresh("offline");
    const before = fx.emulator.requests.length;
    // Offline pins name no k3s installer: the operator's own, on PATH, is used (and liqoctl v1.0.1 on PATH too).
    const path = join(fx.home.path, "offline-path");
    await mkdir(path, { recursive: true });
    await writeFile(join(path, "k3s-install.sh"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    await writeFile(join(path, "liqoctl"), "#!/bin/sh\necho 'Client version: v1.0.1'\n", { mode: 0o755 });
    const result = await fx.home.nr(base(["--name", "vm-off", "--skip-operator-install", "--dry-run", "--offline"]), {
      env: { ...env, PATH: `${path}:${process.env.PATH}` },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain("NodeRings has not validated this combination");
    expect(result.stdout).toContain(`sh ${join(path, "k3s-install.sh")} server`);
    expect(fx.emulator.requests.slice(before).some((r) => r.path.startsWith("/api/v1/pins"))).toBe(false);
  });
});

describe("the environment of the programs nr runs (issue 22, item 4)", () => {
  it("the k3s installer, run as root, and liqoctl get none of the secrets in nr's environment", async () => {
    const env = await fresh("child-env");
    const canaries = {
      NR_PROXMOX_TOKEN_SECRET: "canary-proxmox-secret-77a2",
      NODEKIT_REGISTRY_PASSWORD: "canary-registry-password-9d0e",
      NVKE_NICO_API_KEY: "canary-nico-key-31b8",
      K3S_TOKEN: "canary-k3s-token-6e21",
    };
    // Stand-ins on PATH (--offline uses the operator's own) that write down what they got.
    const path = join(fx.home.path, "child-env-path");
    const dumps = join(fx.home.path, "child-env-dumps");
    await mkdir(dumps, { recursive: true });
    const dump = (exit: string) => `#!/bin/sh\nenv > "${dumps}/$(basename "$0").$$"\n${exit}\n`;
    await mkdir(path, { recursive: true });
    await writeFile(join(path, "k3s-install.sh"), dump("exit 1"), { mode: 0o755 });
    await writeFile(join(path, "liqoctl"), dump("echo 'Client version: v1.0.1'"), { mode: 0o755 });
    const proxy = "http://proxy.invalid:3128";

    const result = await fx.home.nr(
      base(["--name", "vm-child-env", "--skip-operator-install", "--offline", "--kubeconfig", "/nonexistent"]),
      {
        env: {
          ...env,
          ...canaries,
          PATH: `${path}:${process.env.PATH}`,
          HTTPS_PROXY: proxy,
          NO_PROXY: "127.0.0.1",
          CONTAINERD_HTTP_PROXY: proxy,
        },
      },
    );

    expect(result.stderr).toContain("k3s");
    const files = await readdir(dumps);
    expect(files.some((file) => file.startsWith("k3s-install.sh."))).toBe(true);
    for (const file of files) {
      const text = `\n${await readFile(join(dumps, file), "utf8")}`;
      for (const secret of [TOKEN, ...Object.values(canaries)]) expect(text, file).not.toContain(secret);
      expect(text).toContain(`\nHTTPS_PROXY=${proxy}\n`);
      if (file.startsWith("k3s-install.sh.")) {
        // What the installer needs: the pinned version, and containerd's proxy to copy into k3s's service.
        expect(text).toMatch(/\nINSTALL_K3S_VERSION=v[^\n]+\n/);
        expect(text).toContain(`\nCONTAINERD_HTTP_PROXY=${proxy}\n`);
      }
    }
  });
});

describe("signals (issue 23, item 7)", () => {
  const bin = join(repoRoot, "apps/nr/bin/run.js");
  const start = (args: string[], env: Record<string, string>) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: fx.home.path, NO_COLOR: "1", ...env },
      stdio: ["ignore", "ignore", "pipe"],
      // Its own process group, as a shell gives a foreground job: Ctrl-C reaches all of it.
      detached: true,
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exited, stderr: () => stderr };
  };
  /** Waits (10 s at most) until `what` holds; a wait that never sees it fails the test, not signals too early or late. */
  const until = async (what: () => boolean | Promise<boolean>, waitingFor: string) => {
    for (let i = 0; i < 200; i++) {
      if (await what()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`gave up waiting (10 s) until ${waitingFor}`);
  };

  it("SIGTERM lets the running step finish, then stops: RUN_TERMINATED with its phase recorded, the lock released, exit 143", async () => {
    const env = await fresh("sigterm");
    fx.emulator.chaos("slow", { count: 1, delayMs: 3_000, method: "POST", path: "/api/v1/agents" });
    const before = fx.emulator.requests.length;
    const run = start(base(["--name", "vm-sigterm", "--skip-operator-install", "--kubeconfig", "/nonexistent"]), env);
    // While the agent is being created (its one step), the run is asked to stop. The phase's
    // "[agent] Agent record" line comes before its look-up (observe), not its step: a signal
    // then stops the run before the step, as it should, and under load it often came then.
    // The step's own look-up (ensureAgent: find, then the create slowed 3 s) is the second
    // GET of the agents: once it is answered, the step is running and has seconds to go.
    const lookUps = () =>
      fx.emulator.requests.slice(before).filter((r) => r.method === "GET" && r.path === "/api/v1/agents").length;
    await until(() => lookUps() >= 2, "the create-agent step looked the agent up");
    const signalledAt = Date.now();
    run.child.kill("SIGTERM");
    const code = await run.exited;

    expect(code, run.stderr()).toBe(143);
    const state = JSON.parse(await readFile(join(env.NR_HOME as string, "state.json"), "utf8"));
    // The step finished (the agent exists and is recorded); the run stopped before the next one
    expect(state.phases.agent.state).toBe("done");
    // ... after the signal: it was running then (its create, slowed, answered later)
    expect(Date.parse(state.phases.agent.finishedAt)).toBeGreaterThan(signalledAt);
    expect(fx.emulator.requests.slice(before).some((r) => r.method === "POST" && r.chaos === "slow")).toBe(true);
    expect(state.status).toBe("interrupted");
    expect(state.lastError).toMatchObject({ code: "RUN_TERMINATED", phase: "prechecks" });
    expect(run.stderr()).toContain("error: prechecks: stopped during phase prechecks");
    expect(await exists(join(env.NR_LOCK_DIR as string, "register.lock"))).toBe(false);
  }, 60_000);

  it("Ctrl-C stops the step it reached with the terminal's process group: RUN_INTERRUPTED, not the step's failure, exit 130", async () => {
    const env = await fresh("sigint-group");
    // The operator's own k3s installer (--offline uses it): it says it started, then takes its time.
    const path = join(fx.home.path, "sigint-path");
    const marker = join(fx.home.path, "sigint-installer-started");
    await mkdir(path, { recursive: true });
    await writeFile(join(path, "k3s-install.sh"), `#!/bin/sh\ntouch '${marker}'\nexec sleep 30\n`, { mode: 0o755 });
    await writeFile(join(path, "liqoctl"), "#!/bin/sh\necho 'Client version: v1.0.1'\n", { mode: 0o755 });
    const run = start(
      base(["--name", "vm-sigint", "--skip-operator-install", "--offline", "--kubeconfig", "/nonexistent"]),
      { ...env, PATH: `${path}:${process.env.PATH}` },
    );
    await until(() => exists(marker), "the k3s installer started");
    process.kill(-(run.child.pid ?? 0), "SIGINT");
    const code = await run.exited;

    expect(code, run.stderr()).toBe(130);
    const state = JSON.parse(await readFile(join(env.NR_HOME as string, "state.json"), "utf8"));
    expect(state.status).toBe("interrupted");
    expect(state.lastError).toMatchObject({ code: "RUN_INTERRUPTED", phase: "k3s" });
    expect(run.stderr()).toContain("interrupted during phase k3s: its step stopped");
    expect(await exists(join(env.NR_LOCK_DIR as string, "register.lock"))).toBe(false);
  }, 60_000);
});

describe("the lock", () => {
  it("a second run while the first runs is refused, naming the first", async () => {
    const env = await fresh("concurrent");
    fx.emulator.chaos("slow", { count: 1, delayMs: 4_000, method: "POST", path: "/api/v1/agents" });
    const bin = join(repoRoot, "apps/nr/bin/run.js");
    const first = spawn(
      process.execPath,
      [bin, ...base(["--name", "vm-lock", "--skip-operator-install", "--kubeconfig", "/nonexistent"])],
      {
        env: { PATH: process.env.PATH ?? "", HOME: fx.home.path, ...env, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let firstErr = "";
    first.stderr.on("data", (chunk: Buffer) => {
      firstErr += chunk.toString();
    });
    const firstDone = new Promise<number | null>((resolve) => first.on("exit", resolve));
    // Wait until the first run holds the lock (its agent phase is running).
    for (let i = 0; i < 100 && !firstErr.includes("[agent] Agent record"); i++)
      await new Promise((r) => setTimeout(r, 100));
    const second = await fx.home.nr(base(["--name", "vm-lock", "--skip-operator-install", "--resume"]), { env });
    expect(second.exitCode).toBe(5);
    expect(second.stderr).toContain(`another run is in progress: nr cluster register (pid ${first.pid}`);
    // One lock for the machine (item 6): a run with a state of its own (another NR_HOME) is
    // refused too — two states must not register one VM at once
    const other = await fx.home.nr(base(["--name", "vm-lock-2", "--skip-operator-install"]), {
      env: await fresh("concurrent-other-home"),
    });
    expect(other.exitCode, other.stderr).toBe(5);
    expect(other.stderr).toContain(`another run is in progress: nr cluster register (pid ${first.pid}`);
    await firstDone;
  }, 60_000);

  it("a lock whose pid another process took since is stale, and --break-lock clears it", async () => {
    const env = await fresh("reused-pid");
    // What a killed run leaves when its pid was reused: pid 1 is alive, but started at another time.
    const lockDir = env.NR_LOCK_DIR as string;
    await mkdir(join(lockDir, "register.lock"), { recursive: true, mode: 0o700 });
    await writeFile(
      join(lockDir, "register.lock-owner.json"),
      JSON.stringify({
        pid: 1,
        host: hostname(),
        name: "nr cluster register",
        since: "2025-10-01T12:00:00.000Z",
        runId: "gone",
        startTime: "999999999999",
      }),
      { mode: 0o600 },
    );
    const refused = await dryRun(env, ["--name", "vm-reused"]);
    expect(refused.exitCode, refused.stderr).toBe(0); // a dry run takes no lock
    const run = await fx.home.nr(base(["--name", "admin", "--skip-operator-install"]), { env });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain("that pid is another process now");
    const broken = await fx.home.nr(base(["--name", "admin", "--skip-operator-install", "--break-lock"]), { env });
    expect(broken.stderr).toContain("cleared a stale lock");
    // It went on: the API refused the name (exit 8), not the lock
    expect(broken.exitCode, broken.stderr).toBe(8);
    expect(await exists(join(lockDir, "register.lock"))).toBe(false);
  });
});
