import { describe, expect, it } from "vitest";
import {
  compareVersions,
  k3sOneMinorAtATime,
  liqoctlMatchesLiqo,
  liqoPeeringSameMinor,
  minorOf,
  noDowngrade,
} from "./skew.ts";

describe("comparing component versions", () => {
  it("orders by semver, then by k3s's +k3sN revision (which semver ignores as build metadata)", () => {
    expect(compareVersions("v1.33.5+k3s1", "v1.33.5+k3s2")).toBe(-1);
    expect(compareVersions("v1.33.5+k3s10", "v1.33.5+k3s2")).toBe(1);
    expect(compareVersions("v1.33.10+k3s1", "v1.33.9+k3s3")).toBe(1);
    expect(compareVersions("v1.34.0-rc1+k3s1", "v1.34.0+k3s1")).toBe(-1);
    expect(compareVersions("0.4.0", "v0.4.0")).toBe(0);
    expect(compareVersions("latest", "v1.0.0")).toBeUndefined();
    expect(minorOf("v1.0.1")).toBe("v1.0");
    expect(minorOf("v1.33.5+k3s1")).toBe("v1.33");
  });
});

describe("the skew rules", () => {
  it("no downgrade, of any component (a new k3s revision of the same Kubernetes is an upgrade)", () => {
    expect(noDowngrade("k3s", "v1.33.5+k3s2", "v1.33.5+k3s1")).toEqual({
      rule: "downgrade",
      component: "k3s",
      from: "v1.33.5+k3s2",
      to: "v1.33.5+k3s1",
    });
    expect(noDowngrade("calico", "v3.30.3", "v3.29.9")?.rule).toBe("downgrade");
    expect(noDowngrade("proxmox-operator", "0.5.0", "0.4.9")?.rule).toBe("downgrade");
    expect(noDowngrade("k3s", "v1.33.5+k3s1", "v1.33.5+k3s2")).toBeUndefined();
    expect(noDowngrade("liqo", "v1.0.1", "v1.0.1")).toBeUndefined();
    expect(noDowngrade("liqo", "v1.0.1", "main")?.rule).toBe("unreadable");
  });

  it("k3s one minor at a time (docs.k3s.io/upgrades/manual), patches and revisions freely", () => {
    expect(k3sOneMinorAtATime("v1.33.5+k3s1", "v1.34.1+k3s1")).toBeUndefined();
    expect(k3sOneMinorAtATime("v1.33.5+k3s1", "v1.33.9+k3s2")).toBeUndefined();
    expect(k3sOneMinorAtATime("v1.33.5+k3s1", "v1.35.0+k3s1")).toEqual({
      rule: "k3s-minor-skip",
      component: "k3s",
      from: "v1.33.5+k3s1",
      to: "v1.35.0+k3s1",
    });
    expect(k3sOneMinorAtATime("v1.33.5+k3s1", "v2.0.0+k3s1")?.rule).toBe("k3s-minor-skip");
  });

  it("liqoctl is Liqo's own version", () => {
    expect(liqoctlMatchesLiqo("v1.0.2", "v1.0.2")).toBeUndefined();
    expect(liqoctlMatchesLiqo("v1.0.1", "v1.0.2")).toEqual({
      rule: "liqoctl-mismatch",
      component: "liqo",
      liqoctl: "v1.0.1",
      liqo: "v1.0.2",
    });
  });

  it("no peering across Liqo minors: a new minor on a peered agent only when NodeRings runs it already", () => {
    // A patch release moves on its own ("net of patch releases": liqo docs/usage/peer.md)
    expect(liqoPeeringSameMinor({ from: "v1.0.1", to: "v1.0.3", peered: true, platform: "v1.0.1" })).toBeUndefined();
    // Not peered: nothing to keep together
    expect(liqoPeeringSameMinor({ from: "v1.0.1", to: "v1.1.0", peered: false, platform: undefined })).toBeUndefined();
    // NodeRings on the new minor already: the upgrade brings the two sides together
    expect(liqoPeeringSameMinor({ from: "v1.0.1", to: "v1.1.0", peered: true, platform: "v1.1.2" })).toBeUndefined();
    // NodeRings still on the old minor, or silent: refused
    expect(liqoPeeringSameMinor({ from: "v1.0.1", to: "v1.1.0", peered: true, platform: "v1.0.1" })).toEqual({
      rule: "liqo-peering-minor",
      component: "liqo",
      from: "v1.0.1",
      to: "v1.1.0",
      platform: "v1.0.1",
    });
    expect(liqoPeeringSameMinor({ from: "v1.0.1", to: "v1.1.0", peered: true, platform: undefined })?.rule).toBe(
      "liqo-peering-minor",
    );
  });
});
