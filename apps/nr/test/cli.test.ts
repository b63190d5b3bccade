import { spawn } from "node:child_process";
import { access, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type RunningNodeRingsEmulator, startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { repoRoot } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostRoot, type NrHome, nrHome } from "./helpers.ts";

// nr as a user runs it — the built binary, as a subprocess — against the NodeRings
// emulator, for everything that is decided before a cluster is touched: help, status,
// bad input, the API's failures, the lock, the dry run.

const TOKEN = "nr-cli-test-token";
let emulator: RunningNodeRingsEmulator;
let home: NrHome;
let root: string;

const PHASES = [
  "agent",
  "prechecks",
  "k3s",
  "calico",
  "liqo",
  "outbound-peer",
  "offloading",
  "inbound-peering",
  "operator",
  "verify",
];

beforeAll(async () => {
  emulator = await startNodeRingsEmulator({ tokens: [TOKEN] });
  home = await nrHome("nr-cli-");
  root = await hostRoot(home.path);
});

afterAll(async () => {
  await emulator.stop();
  await home.cleanup();
});

const base = (extra: string[] = []) => [
  "cluster",
  "register",
  "--api-url",
  emulator.url,
  "--host-root",
  root,
  "--api-timeout",
  "2s",
  ...extra,
];

/** A fresh ~/.nr for one test. */
async function fresh(name: string): Promise<Record<string, string>> {
  const nr = join(home.path, name);
  await mkdir(nr, { recursive: true });
  return { NR_HOME: nr, NR_API_TOKEN: TOKEN };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("help", () => {
  it("lists the ten phases in order, from the list that drives the run", async () => {
    const result = await home.nr(["cluster", "register", "--help"]);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.split("\n").filter((line) => /^\s+\d+\. /.test(line));
    expect(lines.map((line) => line.trim().split(/\s+/)[1])).toEqual(PHASES);
  });
});

describe("nr cluster status", () => {
  it("says so when there is no registration yet", async () => {
    const env = await fresh("status-none");
    const table = await home.nr(["cluster", "status"], { env });
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toContain("No registration on this machine yet");
    expect(table.stdout).toContain("Next:     nr cluster register --name NAME --api-url URL");
    const json = await home.nr(["cluster", "status", "-o", "json"], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ status: "none", next: "agent" });
  });

  it("reads an interrupted run's state: what is done, where it stopped, how to continue", async () => {
    const env = await fresh("status-interrupted");
    const at = "2025-10-01T12:00:00.000Z";
    const hash = `sha256:${"a".repeat(64)}`;
    await writeFile(
      join(env.NR_HOME as string, "state.json"),
      JSON.stringify({
        apiVersion: "phase-runner.nodekit.dev/v1",
        kind: "RunState",
        name: "nr cluster register",
        runId: "r1",
        createdAt: at,
        updatedAt: at,
        status: "running",
        phases: {
          agent: { state: "done", finishedAt: at, inputsHash: hash, outputs: { agentId: "a1", name: "vm-1" }, runs: 1 },
          prechecks: { state: "skipped", reason: "--skip-prechecks", runs: 0 },
        },
        meta: { agent: { name: "vm-1" }, api: emulator.url },
      }),
      { mode: 0o600 },
    );
    const result = await home.nr(["cluster", "status"], { env });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain("Status:   interrupted");
    expect(result.stdout).toMatch(/2\s+prechecks\s+SKIPPED\s+--skip-prechecks/);
    expect(result.stdout).toMatch(/3\s+k3s\s+PENDING/);
    expect(result.stdout).toContain("VMs cannot be sold");
    expect(result.stdout).toContain("Next:     nr cluster register --resume");
    const yaml = await home.nr(["cluster", "status", "-o", "yaml"], { env });
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
    const status = await home.nr(["cluster", "status"], { env });
    expect(status.exitCode).toBe(3);
    expect(status.stderr).toContain(`${file}:4: field status:`);
    const resume = await home.nr(base(["--resume", "--skip-operator-install"]), { env });
    expect(resume.exitCode).toBe(3);
    expect(resume.stderr).toMatch(/the state file .* has \d+ problems?; nothing was changed/);
    expect(await readFile(file, "utf8")).toContain('"maybe"');
  });
});

describe("nr cluster register refuses bad input before it changes anything", () => {
  it("an unknown phase id names the known ones (exit 2)", async () => {
    const env = await fresh("unknown-phase");
    const result = await home.nr(base(["--name", "vm-x", "--skip-phases", "agnet"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('there is no phase "agnet" (--skip-phases)');
    expect(result.stderr).toContain(`the phases are, in order: ${PHASES.join(", ")}`);
  });

  it("no --name or --agent-id (exit 2)", async () => {
    const env = await fresh("no-name");
    const result = await home.nr(base(["--skip-operator-install"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("--name NAME");
  });

  it("a --timeout that is not a duration is a usage error (exit 2), worded as nvkectl words it", async () => {
    const env = await fresh("bad-timeout");
    const result = await home.nr(base(["--name", "vm-x", "--timeout", "soon"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: --timeout "soon" is not a duration');
    expect(result.stderr).toContain(
      "next: give it as a number with a unit, as kubectl does: --timeout 90s, --timeout 10m, --timeout 1h30m",
    );
  });

  it("a secret on the command line is refused and never echoed", async () => {
    const env = await fresh("secret-argv");
    const result = await home.nr(base(["--name", "vm-x", "--proxmox-token-secret", "s3cr3t-on-argv"]), { env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("--proxmox-token-secret is not accepted");
    expect(`${result.stdout}${result.stderr}`).not.toContain("s3cr3t-on-argv");
  });

  it("an agent name the API refuses: its message verbatim (exit 8), nothing recorded as done", async () => {
    const env = await fresh("reserved");
    const result = await home.nr(base(["--name", "admin", "--skip-operator-install"]), { env });
    expect(result.exitCode).toBe(8);
    expect(result.stderr).toMatch(/error: agent: .*reserved/);
    expect(result.stderr).toContain("nr cluster register --resume");
    const state = JSON.parse(await readFile(join(env.NR_HOME as string, "state.json"), "utf8"));
    expect(state.phases.agent.state).toBe("failed");
  });

  it("no token: nothing is sent (exit 7)", async () => {
    const env = { ...(await fresh("no-token")), NR_API_TOKEN: "" };
    const before = emulator.requests.length;
    const result = await home.nr(base(["--name", "vm-x", "--skip-operator-install"]), { env });
    expect(result.exitCode).toBe(7);
    expect(emulator.requests.length).toBe(before);
  });

  it("a config file holding the token that others may read is refused", async () => {
    const env = await fresh("config-mode");
    const config = join(env.NR_HOME as string, "config.yaml");
    await writeFile(config, `apiUrl: ${emulator.url}\ntoken: ${TOKEN}\n`, { mode: 0o644 });
    const result = await home.nr(["cluster", "register", "--name", "vm-x", "--dry-run", "--host-root", root], {
      env: { NR_HOME: env.NR_HOME },
    });
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toContain(`chmod 600 ${config}`);
    expect(result.stderr).not.toContain(TOKEN);
  });
});

describe("the API's failures", () => {
  it("an HTML 500 from a proxy (after the retries), exit 6, the page not the contract", async () => {
    const env = await fresh("html500");
    // The first request and its three retries.
    emulator.chaos("html500", { count: 4 });
    const result = await home.nr(base(["--name", "vm-x", "--skip-operator-install", "--dry-run"]), { env });
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toContain("HTTP 500, text/html");
  });

  it("429 with a Retry-After longer than nr waits, exit 6, saying how long", async () => {
    const env = await fresh("rate-limit");
    // An emulator of its own: a rate limiter refuses everything until the time it named.
    const limited = await startNodeRingsEmulator({ tokens: [TOKEN] });
    limited.chaos("rate-limit", { count: 1, retryAfterSeconds: 120 });
    const args = base(["--name", "vm-x", "--skip-operator-install", "--dry-run"]);
    args[args.indexOf(emulator.url)] = limited.url;
    const result = await home.nr(args, { env });
    await limited.stop();
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(/120 s/);
  });

  it("an API that does not answer in time, exit 6", async () => {
    const env = await fresh("hang");
    emulator.chaos("hang", { count: 4 });
    const result = await home.nr(base(["--name", "vm-x", "--skip-operator-install", "--dry-run"]), {
      env,
      timeoutMs: 120_000,
    });
    expect(result.exitCode).toBe(6);
    expect(result.stderr).toMatch(/did not answer|within the deadline|in time/);
  }, 120_000);

  it("an API that cannot be reached, exit 6", async () => {
    const env = await fresh("unreachable");
    const result = await home.nr(
      ["cluster", "register", "--api-url", "http://127.0.0.1:9", "--host-root", root, "--name", "vm-x", "--dry-run"],
      { env },
    );
    expect(result.exitCode).toBe(6);
  });

  it("pins with a missing digest: located, exit 3, nothing downloaded", async () => {
    const env = await fresh("no-digest");
    const pins = structuredClone(emulator.pins);
    delete pins.tools.liqoctl.artifacts?.amd64?.sha256;
    emulator.setPins(pins);
    const before = emulator.requests.length;
    const result = await home.nr(base(["--name", "vm-x", "--skip-operator-install"]), { env });
    emulator.setPins(undefined);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("field tools.liqoctl.artifacts.amd64.sha256: is missing");
    expect(emulator.requests.slice(before).some((r) => r.path.startsWith("/artifacts/"))).toBe(false);
    expect(await exists(join(env.NR_HOME as string, "state.json"))).toBe(false);
  });

  it("a tool only the phases left out use is not asked for: its missing digest does not matter", async () => {
    const env = await fresh("no-digest-unused");
    const pins = structuredClone(emulator.pins);
    delete pins.tools.liqoctl.artifacts?.amd64?.sha256;
    emulator.setPins(pins);
    const result = await home.nr(
      base([
        "--name",
        "vm-x",
        "--skip-operator-install",
        "--skip-phases",
        "liqo,outbound-peer,offloading",
        "--dry-run",
      ]),
      { env },
    );
    emulator.setPins(undefined);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).not.toContain("liqoctl");
    expect(result.stdout).toContain("Liqo (skipped (--skip-phases))");
  });

  it("a tampered download fails the phase closed: nothing kept in ~/.nr/bin, the phase failed in the state", async () => {
    const env = await fresh("tampered");
    emulator.artifactFault("tamper", { tool: "k3s-install" });
    const result = await home.nr(
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
    const result = await home.nr(base(["--name", "vm-dry", "--skip-operator-install", "--dry-run"]), { env });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(
      result.stdout
        .split("\n")
        .filter((l) => l.startsWith("# ["))
        .map((l) => l.split(" ")[2]),
    ).toEqual(PHASES.map((id) => `${id}:`));
    expect(result.stdout).toContain(
      "sh " +
        join(env.NR_HOME as string, "bin/k3s-install.sh") +
        " server --flannel-backend=none --disable-network-policy --cluster-cidr=10.42.0.0/16 --service-cidr=10.43.0.0/16 --node-name=pve-node-1",
    );
    expect(result.stdout).toContain("skipped: --skip-operator-install");
    const agents = await fetch(`${emulator.url}/api/v1/agents?name=vm-dry`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await agents.json()) as { items: unknown[] }).items).toEqual([]);
    expect(await exists(join(env.NR_HOME as string, "state.json"))).toBe(false);
    const json = await home.nr(base(["--name", "vm-dry", "--skip-operator-install", "--dry-run", "-o", "json"]), {
      env,
    });
    expect(JSON.parse(json.stdout)).toMatchObject({ apiVersion: "plan.nodekit.dev/v1", kind: "Plan" });
  });

  it("--offline warns that the combination is not platform-validated and asks no pins", async () => {
    const env = await fresh("offline");
    const before = emulator.requests.length;
    // Offline pins name no k3s installer and no liqoctl digest: the operator's own, on PATH, are used.
    const path = join(home.path, "offline-path");
    await mkdir(path, { recursive: true });
    await writeFile(join(path, "k3s-install.sh"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    await writeFile(join(path, "liqoctl"), "#!/bin/sh\necho 'Client version: v1.0.1'\n", { mode: 0o755 });
    const result = await home.nr(base(["--name", "vm-off", "--skip-operator-install", "--dry-run", "--offline"]), {
      env: { ...env, PATH: `${path}:${process.env.PATH}` },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain("NodeRings has not validated this combination");
    expect(result.stdout).toContain(`sh ${join(path, "k3s-install.sh")} server`);
    expect(emulator.requests.slice(before).some((r) => r.path.startsWith("/api/v1/pins"))).toBe(false);
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
    const path = join(home.path, "child-env-path");
    const dumps = join(home.path, "child-env-dumps");
    await mkdir(dumps, { recursive: true });
    const dump = (exit: string) => `#!/bin/sh\nenv > "${dumps}/$(basename "$0").$$"\n${exit}\n`;
    await mkdir(path, { recursive: true });
    await writeFile(join(path, "k3s-install.sh"), dump("exit 1"), { mode: 0o755 });
    await writeFile(join(path, "liqoctl"), dump("echo 'Client version: v1.0.1'"), { mode: 0o755 });
    const proxy = "http://proxy.invalid:3128";

    const result = await home.nr(
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

describe("the lock", () => {
  it("a second run while the first runs is refused, naming the first", async () => {
    const env = await fresh("concurrent");
    emulator.chaos("slow", { count: 1, delayMs: 4_000, method: "POST", path: "/api/v1/agents" });
    const bin = join(repoRoot, "apps/nr/bin/run.js");
    const first = spawn(
      process.execPath,
      [bin, ...base(["--name", "vm-lock", "--skip-operator-install", "--kubeconfig", "/nonexistent"])],
      {
        env: { PATH: process.env.PATH ?? "", HOME: home.path, ...env, NO_COLOR: "1" },
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
    const second = await home.nr(base(["--name", "vm-lock", "--skip-operator-install", "--resume"]), { env });
    expect(second.exitCode).toBe(5);
    expect(second.stderr).toContain(`another run is in progress: nr cluster register (pid ${first.pid}`);
    await firstDone;
  }, 60_000);
});
