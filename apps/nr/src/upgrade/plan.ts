import {
  k3sOneMinorAtATime,
  liqoctlMatchesLiqo,
  liqoPeeringSameMinor,
  noDowngrade,
  type SkewViolation,
  UPGRADE_COMPONENTS,
  type UpgradeComponent,
} from "./skew.ts";

// The pure core of `nr cluster upgrade`: from what the registration installed and the new
// pins, which component moves from which version to which, what restarts, what is left
// untouched, and which skew rules refuse the move. The service reads the facts; the phases
// run what this decides.

/** What the planner is given: read from the registration's state, the new pins and NodeRings. */
export interface UpgradeFacts {
  /** The version nr installed of each component (its register phase's checkpoint); absent when nr did not install it. */
  installed: Partial<Record<UpgradeComponent, string>>;
  /** The new pins' version of each component, and of liqoctl (which upgrades Liqo). */
  target: Record<UpgradeComponent, string> & { liqoctl: string };
  /** Whether the agent is peered with NodeRings (its outbound peering is recorded done). */
  peered: boolean;
  /** The Liqo NodeRings runs (its peering parameters), when it was asked: only for a Liqo minor change on a peered agent. */
  platformLiqo: string | undefined;
}

/** One component in the plan. */
export interface ComponentPlan {
  component: UpgradeComponent;
  /** What is installed (undefined: nr did not install it). */
  from: string | undefined;
  to: string;
  /** `upgrade`: applied in place; `unchanged`: its pin did not change, not touched; `not-installed`: left for register. */
  change: "upgrade" | "unchanged" | "not-installed";
  /** What restarts when it is upgraded; what an unchanged one keeps. */
  restarts: string;
}

export interface UpgradePlan {
  components: ComponentPlan[];
  /** Every skew rule the move breaks; the upgrade runs only when there is none. */
  violations: SkewViolation[];
}

/**
 * What restarts when each component is upgraded in place. k3s: the installer re-run with the
 * same flags and a new INSTALL_K3S_VERSION downloads the binary and restarts the service
 * (docs.k3s.io/upgrades/manual); its containers keep running while it restarts ("to allow
 * high availability during upgrades, the K3s containers continue running when the K3s
 * service is stopped", docs.k3s.io/upgrades/killall). Calico: the new operator manifests are
 * applied server-side and the operator rolls Calico's pods (docs.tigera.io "Upgrading an
 * installation that uses the operator"). Liqo: `liqoctl install` at the new version is
 * "installing or upgrading Liqo", a helm upgrade of its release with its CRDs
 * (liqotech/liqo pkg/liqoctl/install/handler.go). The operator: a helm upgrade.
 */
const RESTARTS: Record<UpgradeComponent, string> = {
  k3s: "the k3s service (API server, kubelet) restarts on the new binary; running pods keep running",
  calico: "the tigera operator, then calico-node and Calico's other pods roll to the new version",
  liqo: "liqoctl at the new version upgrades the liqo release (helm upgrade, CRDs included): Liqo's pods roll; the peering with NodeRings is kept, not redone",
  "proxmox-operator": "helm upgrade of the proxmox-operator release: its pods roll; the credentials Secret is kept",
};

/**
 * The plan: each component in the upgrade's order (k3s, Calico, Liqo with liqoctl, the
 * operator), upgraded when its pin moved and nr installed it, left untouched otherwise; and
 * every skew rule the move breaks, all at once.
 */
export function planUpgrade(facts: UpgradeFacts): UpgradePlan {
  const components: ComponentPlan[] = [];
  const violations: SkewViolation[] = [];
  for (const component of UPGRADE_COMPONENTS) {
    const from = facts.installed[component];
    const to = facts.target[component];
    if (from === undefined) {
      components.push({
        component,
        from,
        to,
        change: "not-installed",
        restarts: "nothing: nr did not install it (nr cluster register --resume installs it at the new pin)",
      });
      continue;
    }
    const breaks = [noDowngrade(component, from, to)];
    if (component === "k3s") breaks.push(k3sOneMinorAtATime(from, to));
    if (component === "liqo") {
      breaks.push(liqoctlMatchesLiqo(facts.target.liqoctl, to));
      breaks.push(liqoPeeringSameMinor({ from, to, peered: facts.peered, platform: facts.platformLiqo }));
    }
    violations.push(...breaks.filter((entry): entry is SkewViolation => entry !== undefined));
    const same = from === to;
    components.push({
      component,
      from,
      to,
      change: same ? "unchanged" : "upgrade",
      restarts: same ? "nothing: its pin did not change, not touched" : RESTARTS[component],
    });
  }
  return { components, violations };
}

/** One sentence per violation: what the rule refuses and where it comes from. */
export function describeViolation(violation: SkewViolation): string {
  switch (violation.rule) {
    case "unreadable":
      return `${violation.component}: ${violation.from} → ${violation.to}: not versions nr can compare`;
    case "downgrade":
      return `${violation.component}: ${violation.from} → ${violation.to} is a downgrade; no component is moved back`;
    case "k3s-minor-skip":
      return `k3s: ${violation.from} → ${violation.to} skips a minor version; k3s upgrades one minor at a time (docs.k3s.io/upgrades/manual: the Kubernetes version skew policy)`;
    case "liqoctl-mismatch":
      return `liqo: liqoctl ${violation.liqoctl} does not match Liqo ${violation.liqo}; liqoctl must be Liqo's own version`;
    case "liqo-peering-minor":
      return `liqo: ${violation.from} → ${violation.to} changes Liqo's minor version while peered with NodeRings, which runs ${violation.platform ?? "an unknown version"}; Liqo does not support a peering across minor versions (liqotech/liqo docs/usage/peer.md)`;
  }
}

/** The version of each component the state's pins record under (liqoctl with Liqo). */
export const PIN_TOOLS: Record<UpgradeComponent, readonly string[]> = {
  k3s: ["k3s"],
  calico: ["calico"],
  liqo: ["liqo", "liqoctl"],
  "proxmox-operator": ["proxmox-operator"],
};
