import { describe, expect, it } from "vitest";
import { describeViolation, planUpgrade, type UpgradeFacts } from "./plan.ts";

const installed = { k3s: "v1.33.5+k3s1", calico: "v3.30.3", liqo: "v1.0.1", "proxmox-operator": "0.4.0" };
const facts = (over: Partial<UpgradeFacts> & { to?: Partial<UpgradeFacts["target"]> } = {}): UpgradeFacts => ({
  installed: over.installed ?? installed,
  target: { ...installed, liqoctl: "v1.0.1", ...over.to },
  peered: over.peered ?? true,
  platformLiqo: over.platformLiqo,
});

describe("the upgrade planner", () => {
  it("moves only the components whose pin changed, in order; the others are untouched and say so", () => {
    const plan = planUpgrade(facts({ to: { k3s: "v1.34.1+k3s1" } }));
    expect(plan.violations).toEqual([]);
    expect(plan.components.map((entry) => [entry.component, entry.from, entry.to, entry.change])).toEqual([
      ["k3s", "v1.33.5+k3s1", "v1.34.1+k3s1", "upgrade"],
      ["calico", "v3.30.3", "v3.30.3", "unchanged"],
      ["liqo", "v1.0.1", "v1.0.1", "unchanged"],
      ["proxmox-operator", "0.4.0", "0.4.0", "unchanged"],
    ]);
    expect(plan.components[0]?.restarts).toContain("k3s service");
    expect(plan.components[1]?.restarts).toContain("not touched");
  });

  it("leaves what nr did not install to register (a skipped operator), whatever its pin", () => {
    const { "proxmox-operator": _operator, ...rest } = installed;
    const plan = planUpgrade(facts({ installed: rest, to: { "proxmox-operator": "0.3.0" } }));
    expect(plan.violations).toEqual([]);
    expect(plan.components[3]).toMatchObject({
      component: "proxmox-operator",
      from: undefined,
      change: "not-installed",
    });
  });

  it("reports every skew rule the move breaks at once: a downgrade, a 2-minor k3s jump, liqoctl ≠ Liqo, a Liqo minor across the peering", () => {
    const plan = planUpgrade(
      facts({
        to: { k3s: "v1.35.0+k3s1", calico: "v3.29.0", liqo: "v1.1.0", liqoctl: "v1.0.1" },
        platformLiqo: "v1.0.1",
      }),
    );
    expect(plan.violations.map((violation) => `${violation.component}:${violation.rule}`)).toEqual([
      "k3s:k3s-minor-skip",
      "calico:downgrade",
      "liqo:liqoctl-mismatch",
      "liqo:liqo-peering-minor",
    ]);
    expect(plan.violations.map(describeViolation)).toEqual([
      "k3s: v1.33.5+k3s1 → v1.35.0+k3s1 skips a minor version; k3s upgrades one minor at a time (docs.k3s.io/upgrades/manual: the Kubernetes version skew policy)",
      "calico: v3.30.3 → v3.29.0 is a downgrade; no component is moved back",
      "liqo: liqoctl v1.0.1 does not match Liqo v1.1.0; liqoctl must be Liqo's own version",
      "liqo: v1.0.1 → v1.1.0 changes Liqo's minor version while peered with NodeRings, which runs v1.0.1; Liqo does not support a peering across minor versions (liqotech/liqo docs/usage/peer.md)",
    ]);
  });

  it("a Liqo patch with liqoctl moves while peered, and nothing else does", () => {
    const plan = planUpgrade(facts({ to: { liqo: "v1.0.2", liqoctl: "v1.0.2" } }));
    expect(plan.violations).toEqual([]);
    expect(plan.components.filter((entry) => entry.change === "upgrade").map((entry) => entry.component)).toEqual([
      "liqo",
    ]);
    expect(plan.components[2]?.restarts).toContain("the peering with NodeRings is kept, not redone");
  });
});
