import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { RunningNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { createExecaRunner, Redactor } from "@nodekit/process";
import { userErrorOf } from "@nodekit/test-utils";
import type { PinSet } from "@nodekit/version-pins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upgrade } from "../src/services/upgrade.ts";
import { type AgentMachine, agentMachine } from "./agent-fixture.ts";
import { FIXTURES, hostRoot, kubectl, type NrHome, type StandIns } from "./helpers.ts";

// nr cluster upgrade end to end, after a real registration: the NodeRings emulator as the
// platform (its pins replaced by the test's second pin set, fixtures/pins-next.json), the test
// tier's real kube-apiserver as the agent cluster, real kubectl and helm, the strict stand-ins
// for the k3s installer and liqoctl — and a liqoctl of the next Liqo release served on
// loopback, downloaded and checked against its pinned digest as a real upgrade would.

const TOKEN = "nr-upgrade-api-token-7c2e";
const NAME = "pve-upgrade";

interface NextPins {
  name: string;
  versions: Record<"k3s" | "calico" | "liqo" | "liqoctl" | "proxmox-operator", string>;
}

let machine: AgentMachine;
let emulator: RunningNodeRingsEmulator;
let base: PinSet;
let next: NextPins;
let artifacts: Server;
let liqoctlNext: { url: string; sha256: string; size: number };
let home: NrHome;
let stand: StandIns;
let root: string;

beforeAll(async () => {
  machine = await agentMachine("nr-upgrade-", TOKEN);
  ({ emulator, home, stand } = machine);
  const { kubeconfig } = machine;
  base = structuredClone(machine.pins);
  next = JSON.parse(await readFile(join(FIXTURES, "pins-next.json"), "utf8")) as NextPins;
  root = await hostRoot(join(home.path, "host"), { hostname: NAME });
  // The next Liqo release's liqoctl, packaged as upstream ships it (liqoctl-linux-<arch>.tar.gz
  // holding liqoctl): the liqoctl stand-in, answering as that release.
  const pack = join(home.path, "liqoctl-next");
  await mkdir(pack, { recursive: true });
  const shim = await readFile(join(stand.bin, "liqoctl"), "utf8");
  await writeFile(
    join(pack, "liqoctl"),
    shim.replace("\nexec ", `\nexport NR_STANDIN_LIQOCTL_VERSION='${next.versions.liqoctl}'\nexec `),
    { mode: 0o755 },
  );
  execFileSync("tar", ["-czf", join(home.path, "liqoctl-next.tar.gz"), "-C", pack, "liqoctl"]);
  const bytes = await readFile(join(home.path, "liqoctl-next.tar.gz"));
  artifacts = createServer((_req, res) => res.end(bytes));
  await new Promise<void>((resolve) => artifacts.listen(0, "127.0.0.1", resolve));
  liqoctlNext = {
    url: `http://127.0.0.1:${(artifacts.address() as AddressInfo).port}/liqoctl-linux-amd64.tar.gz`,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    size: bytes.length,
  };

  await kubectl(kubeconfig, ["create", "namespace", "tenant-vms"]);
  const registered = await home.nr(registerArgs(kubeconfig), { env: env(), timeoutMs: 110_000 });
  expect(registered.exitCode, registered.stderr).toBe(0);
}, 240_000);

afterAll(async () => {
  await new Promise((resolve) => artifacts?.close(resolve));
  await machine?.stop();
});

const registerArgs = (kubeconfig: string) =>
  machine.registerArgs({ name: NAME, apiUrl: emulator.url, root, kubeconfig });

const upgradeArgs = (...extra: string[]) => machine.upgradeArgs(root, extra);

const env = () => machine.env("canary-upgrade-proxmox-secret-51d0");

/** The platform's pins with these components at the second pin set's versions. */
function pinsMoving(...components: (keyof NextPins["versions"])[]): PinSet {
  const pins = structuredClone(base);
  pins.name = `${next.name}-${components.join("-")}`;
  for (const component of components) {
    pins.tools[component] = { ...pins.tools[component], version: next.versions[component] };
  }
  if (components.includes("liqoctl")) {
    pins.tools.liqoctl.artifacts = { amd64: { ...liqoctlNext, format: "tar.gz", member: "liqoctl" } };
  }
  return pins;
}

interface State {
  status: string;
  meta: { pins: { name: string; versions: Record<string, string> } };
  phases: Record<string, { state: string; runs: number; finishedAt?: string; outputs?: Record<string, unknown> }>;
}
const readState = async (file = "state.json") => JSON.parse(await readFile(join(home.nrHome, file), "utf8")) as State;

const platformWrites = () =>
  emulator.requests.filter((request) => request.method !== "GET" && request.path.includes("/peering")).length;

describe("nr cluster upgrade: the skew rules refuse before anything is done", () => {
  it("a downgrade, a 2-minor k3s jump, liqoctl ≠ Liqo, a Liqo minor NodeRings does not run: each refused, nothing touched", async () => {
    const before = {
      records: (await stand.records()).length,
      state: await readFile(join(home.nrHome, "state.json"), "utf8"),
    };
    const refused = async (pins: unknown, exitCode: number, text: string) => {
      emulator.setPins(pins);
      const result = await home.nr(upgradeArgs("--plan"), { env: env(), timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(exitCode);
      expect(result.stderr).toContain(text);
      expect(result.stdout).toBe("");
    };
    const downgrade = structuredClone(base);
    downgrade.tools.calico.version = "v3.29.6";
    await refused(downgrade, 5, "calico: v3.30.3 → v3.29.6 is a downgrade");
    const jump = structuredClone(base);
    jump.tools.k3s.version = "v1.35.0+k3s1";
    await refused(jump, 5, "skips a minor version; k3s upgrades one minor at a time");
    // liqoctl ≠ Liqo: the pin set itself is refused (its schema holds the rule)
    const mismatch = structuredClone(base);
    mismatch.tools.liqo.version = "v1.0.2";
    await refused(mismatch, 3, "must equal tools.liqo.version (v1.0.2)");
    // NodeRings runs Liqo v1.0.1: a v1.1 agent would peer across minors
    const minor = structuredClone(base);
    minor.tools.liqo.version = "v1.1.0";
    minor.tools.liqoctl.version = "v1.1.0";
    await refused(minor, 5, "which runs v1.0.1; Liqo does not support a peering across minor versions");
    // Every refusal at once, under the first one's code
    const both = structuredClone(jump);
    both.tools.calico.version = "v3.29.6";
    emulator.setPins(both);
    const all = await home.nr(upgradeArgs(), { env: env(), timeoutMs: 60_000 });
    expect(all.exitCode).toBe(5);
    expect(all.stderr).toContain("2 skew rules refuse this upgrade; nothing was done");

    expect((await stand.records()).length).toBe(before.records);
    expect(await readFile(join(home.nrHome, "state.json"), "utf8")).toBe(before.state);
  }, 180_000);
});

describe("nr cluster upgrade: only what changed", () => {
  it("a new k3s: the plan says so; the installer re-runs with the new version; Calico, Liqo and the peerings are untouched", async () => {
    const pins = pinsMoving("k3s");
    emulator.setPins(pins);
    const registered = await readState();
    const records = (await stand.records()).length;
    const writes = platformWrites();

    // The plan: per component, from → to, what restarts, what is untouched
    const plan = await home.nr(upgradeArgs("--plan", "-o", "json"), { env: env(), timeoutMs: 60_000 });
    expect(plan.exitCode, plan.stderr).toBe(0);
    const summary = JSON.parse(plan.stdout);
    expect(summary.pins.name).toBe(pins.name);
    expect(
      summary.components.map((c: { component: string; from: string; to: string; change: string }) => [
        c.component,
        c.from,
        c.to,
        c.change,
      ]),
    ).toEqual([
      ["k3s", "v1.33.5+k3s1", "v1.34.1+k3s1", "upgrade"],
      ["calico", "v3.30.3", "v3.30.3", "unchanged"],
      ["liqo", "v1.0.1", "v1.0.1", "unchanged"],
      ["proxmox-operator", "0.4.0", "0.4.0", "unchanged"],
    ]);
    expect(summary.components[0].restarts).toContain("k3s service");
    expect(summary.untouched).toEqual(["calico", "liqo", "proxmox-operator"]);
    const table = await home.nr(upgradeArgs("--plan"), { env: env(), timeoutMs: 60_000 });
    expect(table.stdout).toMatch(/k3s\s+v1\.33\.5\+k3s1\s+v1\.34\.1\+k3s1\s+upgrade/);
    expect(table.stdout).toContain("Untouched: calico, liqo, proxmox-operator");
    // The dry run prints every call: the installer with the registration's flags, and nothing of Calico or Liqo
    const dry = await home.nr(upgradeArgs("--dry-run"), { env: env(), timeoutMs: 60_000 });
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      `INSTALL_K3S_VERSION=v1.34.1+k3s1 sh ${join(stand.bin, "k3s-install.sh")} server --flannel-backend=none`,
    );
    expect(dry.stdout).not.toContain("liqoctl");
    expect(dry.stdout).not.toContain("tigera-operator.yaml");
    expect((await stand.records()).length).toBe(records);

    // When it runs
    const run = await home.nr(upgradeArgs(), { env: env(), timeoutMs: 110_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain("k3s v1.33.5+k3s1 → v1.34.1+k3s1; untouched: calico, liqo, proxmox-operator");

    // Then the installer ran once more, at the new version with the same flags; no liqoctl ran (no install, no peer)
    const ran = (await stand.records()).slice(records);
    expect(ran.map((r) => r.tool)).toEqual(["k3s-install"]);
    expect(ran[0]?.env.INSTALL_K3S_VERSION).toBe("v1.34.1+k3s1");
    const config = await stand.k3sConfig();
    expect(config?.version).toBe("v1.34.1+k3s1");
    expect(config?.nodeName).toBe(NAME);
    // Nothing was asked of NodeRings' peering, and the registration's other checkpoints are as they were
    expect(platformWrites()).toBe(writes);
    const after = await readState();
    expect(after.status).toBe("succeeded");
    expect(after.phases.k3s).toMatchObject({
      state: "done",
      runs: (registered.phases.k3s?.runs ?? 0) + 1,
      outputs: { version: "v1.34.1+k3s1" },
    });
    for (const id of ["calico", "liqo", "outbound-peer", "offloading", "inbound-peering", "operator", "verify"]) {
      expect(after.phases[id], id).toEqual(registered.phases[id]);
    }
    expect(after.meta.pins.versions.k3s).toBe("v1.34.1+k3s1");
    expect(after.meta.pins.name).toBe(pins.name);

    // And status shows the new version; register --resume with the new pins keeps everything
    const status = JSON.parse((await home.nr(["cluster", "status", "-o", "json"], { env: env() })).stdout);
    expect(status.pins.versions.k3s).toBe("v1.34.1+k3s1");
    const resumed = await home.nr([...registerArgs(kubeconfigOf(after)), "--resume"], {
      env: env(),
      timeoutMs: 110_000,
    });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect((await stand.records()).slice(records).map((r) => r.tool)).toEqual(["k3s-install"]);
    const kept = await readState();
    for (const id of ["k3s", "calico", "liqo", "outbound-peer", "inbound-peering", "operator"]) {
      expect(kept.phases[id]?.runs, id).toBe(after.phases[id]?.runs);
    }
    // A second upgrade with the same pins has nothing to do
    const again = await home.nr(upgradeArgs(), { env: env(), timeoutMs: 60_000 });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toContain("nothing to upgrade");
  }, 300_000);

  it("interrupted during Calico, then run again: it continues there (k3s is not redone), Liqo with liqoctl and the operator follow; status shows every new version", async () => {
    const pins = pinsMoving("k3s", "calico", "liqo", "liqoctl", "proxmox-operator");
    emulator.setPins(pins);
    const records = (await stand.records()).length;
    const writes = platformWrites();
    const before = await readState();

    // Given a run stopped by Ctrl-C while Calico's first manifest is applied (the step finishes; the run stops before the next)
    const controller = new AbortController();
    const inner = createExecaRunner();
    const previousPath = process.env.PATH;
    process.env.PATH = machine.path;
    try {
      const stopped = await userErrorOf(
        upgrade({
          mode: "run",
          offline: false,
          calicoManifests: join(FIXTURES, "calico"),
          operatorChart: join(FIXTURES, "proxmox-operator"),
          hostRoot: root,
          waitSeconds: 60,
          pollMs: 100,
          env: { ...env(), NR_HOME: home.nrHome, HOME: home.path },
          runner: inner,
          planRunner: {
            run: (call, options) => {
              if (call.args.some((arg) => arg.endsWith("operator-crds.yaml"))) controller.abort("SIGINT");
              return inner.run(call, options);
            },
          },
          redactor: new Redactor(),
          version: "0.0.0-test",
          warn: () => {},
          debug: () => {},
          signal: controller.signal,
        }),
      );
      expect(stopped.code).toBe("RUN_INTERRUPTED");
      expect(stopped.facts.phase).toBe("calico");
    } finally {
      process.env.PATH = previousPath;
    }
    // Then k3s is upgraded and recorded (status already shows it); Calico is not; the upgrade is interrupted, its lock released
    const midway = await readState();
    expect(midway.phases.k3s?.outputs?.version).toBe("v1.34.1+k3s1");
    expect(midway.phases.calico).toEqual(before.phases.calico);
    expect(midway.meta.pins.versions).toMatchObject({ k3s: "v1.34.1+k3s1", calico: "v3.30.3", liqo: "v1.0.1" });
    const upgradeState = await readState("upgrade-state.json");
    expect(upgradeState.status).toBe("interrupted");
    expect(upgradeState.phases.calico?.state).toBe("failed");
    // And status shows the interrupted upgrade: where it stopped, and what continues it
    const stoppedStatus = JSON.parse((await home.nr(["cluster", "status", "-o", "json"], { env: env() })).stdout);
    expect(stoppedStatus.upgrade).toMatchObject({
      status: "interrupted",
      component: "calico",
      to: pins.name,
      lastError: { code: "RUN_INTERRUPTED" },
    });
    expect(stoppedStatus.nextStep).toContain("nr cluster upgrade");
    const stoppedTable = (await home.nr(["cluster", "status"], { env: env() })).stdout;
    expect(stoppedTable).toMatch(
      /^Upgrade:\s+interrupted at calico \(pins .+ → .+\); its state: .*upgrade-state\.json$/m,
    );
    expect(stoppedTable).toMatch(/^Next:\s+nr cluster upgrade \(/m);

    // When it is run again (no --break-lock: the lock was released)
    const resumed = await home.nr(upgradeArgs(), { env: env(), timeoutMs: 150_000 });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(
      "calico v3.30.3 → v3.30.4, liqo v1.0.1 → v1.0.2, proxmox-operator 0.4.0 → 0.5.0; untouched: k3s",
    );
    expect(resumed.stderr).toContain("keep"); // the PATH advice: liqoctl v1.0.2 was installed into ~/.nr/bin

    // Then k3s never ran again; liqoctl v1.0.2 (downloaded, digest checked) upgraded Liqo once, and peered nothing
    const ran = (await stand.records()).slice(records);
    expect(ran.filter((r) => r.tool === "k3s-install")).toEqual([]);
    expect(ran.map((r) => `${r.tool} ${r.argv[0]}`)).toEqual(["liqoctl install"]);
    expect(ran[0]?.argv).toContain("--version");
    expect(ran[0]?.argv[ran[0].argv.indexOf("--version") + 1]).toBe("v1.0.2");
    expect(platformWrites()).toBe(writes);
    // The operator's release was upgraded by helm (a second release revision), its Secret kept
    const kubeconfig = kubeconfigOf(before);
    expect(await kubectl(kubeconfig, ["get", "secret", "-n", "proxmox-operator", "-o", "name"])).toContain(
      "sh.helm.release.v1.proxmox-operator.v2",
    );
    // And the registration records every new version and the new pin set: status shows them
    const after = await readState();
    expect(after.phases.liqo?.outputs).toMatchObject({
      version: "v1.0.2",
      installed: join(home.nrHome, "bin", "liqoctl"),
    });
    expect(after.phases.calico?.outputs?.version).toBe("v3.30.4");
    expect(after.phases.operator?.outputs?.version).toBe("0.5.0");
    expect(after.phases["outbound-peer"]?.runs).toBe(before.phases["outbound-peer"]?.runs);
    const status = JSON.parse((await home.nr(["cluster", "status", "-o", "json"], { env: env() })).stdout);
    expect(status.status).toBe("succeeded");
    expect(status.upgrade).toBeUndefined();
    expect(status.pins.name).toBe(pins.name);
    expect(status.pins.versions).toMatchObject(next.versions);
    // And register --resume with these pins redoes nothing: no installer, no liqoctl, no peering
    const resumedRegister = await home.nr([...registerArgs(kubeconfig), "--resume"], {
      env: env(),
      timeoutMs: 110_000,
    });
    expect(resumedRegister.exitCode, resumedRegister.stderr).toBe(0);
    expect((await stand.records()).slice(records).length).toBe(ran.length);
    expect(platformWrites()).toBe(writes);
  }, 400_000);
});

function kubeconfigOf(state: State): string {
  return (state.meta as unknown as { kubeconfig: string }).kubeconfig;
}
