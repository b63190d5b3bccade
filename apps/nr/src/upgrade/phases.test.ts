import { hashInputs, type RunState } from "@nodekit/phase-runner";
import { DEFAULT_PINS, pinSetHash, type ResolvedPins } from "@nodekit/version-pins";
import { describe, expect, it } from "vitest";
import type { RegisterContext } from "../register/context.ts";
import { REGISTER_PHASES } from "../register/phases.ts";
import { calicoManifestsBase } from "../services/calico.ts";
import { REFRESHED } from "./phases.ts";
import { registeredOutputs } from "./registration.ts";
import { UPGRADE_COMPONENTS, type UpgradeComponent } from "./skew.ts";

// The upgrade refreshes the registration's evidence of the phases REFRESHED names and no
// other: a register phase whose inputs name a component's version, left out of that list,
// would make `nr cluster register --resume` re-run it (and everything after it) after an
// upgrade that kept its work. These tests fail when a phase's inputs start naming a version.

const done = (outputs: Record<string, string>) => ({
  state: "done" as const,
  finishedAt: "2026-01-01T00:00:00.000Z",
  inputsHash: `sha256:${"0".repeat(64)}`,
  outputs,
  runs: 1,
});

const state: RunState = {
  apiVersion: "phase-runner.nodekit.dev/v1",
  kind: "RunState",
  name: "nr cluster register",
  runId: "r1",
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  status: "succeeded",
  phases: {
    agent: done({ agentId: "a-1", name: "pve-1", clusterId: "pve-1" }),
    k3s: done({ nodeName: "pve-1", version: "v1.33.5+k3s1" }),
  },
  meta: {},
};

function contextWith(change?: { component: UpgradeComponent; version: string }): RegisterContext {
  const pins = structuredClone(DEFAULT_PINS);
  if (change !== undefined) {
    pins.tools[change.component] = { ...pins.tools[change.component], version: change.version };
    if (change.component === "liqo") pins.tools.liqoctl.version = change.version;
  }
  const resolved: ResolvedPins = { pins, origin: "platform", source: "test", hash: pinSetHash(pins), warnings: [] };
  // What the phases' inputs read of a context, as the upgrade service builds it.
  return {
    pins: resolved,
    network: { podCidr: "10.42.0.0/16", serviceCidr: "10.43.0.0/16" },
    apiServer: { url: "https://10.20.0.11:6443", nodeSubnet: "10.20.0.0/24" },
    identity: { name: "pve-1" },
    offload: [],
    ignorePrechecks: [],
    calicoManifests: calicoManifestsBase(pins.tools.calico.version),
    operator: {
      skip: false,
      chart: "oci://registry.noderings.io/charts/proxmox-operator",
      version: pins.tools["proxmox-operator"].version,
      namespace: "proxmox-operator",
      release: "proxmox-operator",
      secretName: "proxmox-credentials",
      credentialsSource: "test",
      credentials: () => Promise.reject(new Error("not read")),
    },
  } as unknown as RegisterContext;
}

const NEXT: Record<UpgradeComponent, string> = {
  k3s: "v1.34.1+k3s1",
  calico: "v3.30.4",
  liqo: "v1.0.2",
  "proxmox-operator": "0.5.0",
};

describe("the registration's evidence an upgrade refreshes", () => {
  it("is exactly the register phases whose inputs name that component's version", () => {
    const prior = registeredOutputs(state);
    const hashes = (context: RegisterContext) =>
      new Map(REGISTER_PHASES.map((entry) => [entry.id, hashInputs(entry.inputs(context, prior))]));
    const before = hashes(contextWith());
    for (const component of UPGRADE_COMPONENTS) {
      const after = hashes(contextWith({ component, version: NEXT[component] }));
      const changed = REGISTER_PHASES.map((entry) => entry.id).filter((id) => before.get(id) !== after.get(id));
      expect({ component, changed }).toEqual({ component, changed: [...REFRESHED[component]] });
    }
  });

  it("reads the registration's outputs as the register phases read their earlier phases'; a missing one says what to do", () => {
    const prior = registeredOutputs(state);
    expect(prior.require("k3s", "nodeName")).toBe("pve-1");
    expect(prior.of("calico")).toBeUndefined();
    expect(() => prior.require("calico", "version")).toThrow(/has no recorded version/);
  });
});
