import compare from "semver/functions/compare.js";
import parse from "semver/functions/parse.js";

// The skew rules of `nr cluster upgrade`: which moves between the installed versions and the
// new pins the upstream projects support. Pure: each rule takes versions and returns what it
// refuses (nothing when the move is fine); the planner reports every refusal at once.

/** What nr installs on the agent and upgrades in place, in the order an upgrade takes them. */
export const UPGRADE_COMPONENTS = ["k3s", "calico", "liqo", "proxmox-operator"] as const;
export type UpgradeComponent = (typeof UPGRADE_COMPONENTS)[number];

/** A version as the rules compare it: semver, plus k3s's `+k3sN` revision (a real release, not build metadata). */
interface ComponentVersion {
  text: string;
  major: number;
  minor: number;
  /** Without the leading `v` and the `+k3sN`: what semver orders. */
  core: string;
  /** k3s's release revision (`v1.33.5+k3s2` is 2), 0 for other components. */
  revision: number;
}

function versionOf(text: string): ComponentVersion | undefined {
  const revision = /\+k3s(\d+)$/.exec(text);
  const core = text.replace(/^v/, "").replace(/\+.*$/, "");
  const parsed = parse(core);
  if (parsed === null) return undefined;
  return { text, major: parsed.major, minor: parsed.minor, core, revision: revision ? Number(revision[1]) : 0 };
}

/**
 * Orders two versions of one component: semver's order, then k3s's revision
 * (`v1.33.5+k3s1` < `v1.33.5+k3s2`; semver ignores build metadata). Undefined when either is
 * not a version (a hand-edited state).
 */
export function compareVersions(a: string, b: string): number | undefined {
  const left = versionOf(a);
  const right = versionOf(b);
  if (left === undefined || right === undefined) return undefined;
  return compare(left.core, right.core) || Math.sign(left.revision - right.revision);
}

/** `v1.0` of `v1.0.1`: what Liqo's peering compatibility goes by. */
export function minorOf(version: string): string | undefined {
  const parsed = versionOf(version);
  return parsed === undefined ? undefined : `v${parsed.major}.${parsed.minor}`;
}

/** One rule's refusal, with the versions it refused. */
export type SkewViolation =
  | { rule: "unreadable"; component: UpgradeComponent; from: string; to: string }
  | { rule: "downgrade"; component: UpgradeComponent; from: string; to: string }
  | { rule: "k3s-minor-skip"; component: "k3s"; from: string; to: string }
  | { rule: "liqoctl-mismatch"; component: "liqo"; liqoctl: string; liqo: string }
  | {
      rule: "liqo-peering-minor";
      component: "liqo";
      from: string;
      to: string;
      /** The Liqo NodeRings runs (its peering parameters), or undefined when it did not say. */
      platform: string | undefined;
    };

/**
 * No component moves backwards: neither k3s (Kubernetes supports no downgrade of a control
 * plane: its version skew policy is for upgrades), nor Calico, Liqo or the operator (their
 * upgrade guides go one way; CRDs and stored objects are not converted back).
 */
export function noDowngrade(component: UpgradeComponent, from: string, to: string): SkewViolation | undefined {
  const order = compareVersions(from, to);
  if (order === undefined) return { rule: "unreadable", component, from, to };
  return order > 0 ? { rule: "downgrade", component, from, to } : undefined;
}

/**
 * k3s one minor at a time: "the Kubernetes version skew policy applies. Ensure that your plan
 * does not skip intermediate minor versions when upgrading" (docs.k3s.io/upgrades/manual).
 * v1.33 → v1.34 is a step; v1.33 → v1.35, or to another major, is not.
 */
export function k3sOneMinorAtATime(from: string, to: string): SkewViolation | undefined {
  const before = versionOf(from);
  const after = versionOf(to);
  if (before === undefined || after === undefined) return { rule: "unreadable", component: "k3s", from, to };
  const skips = after.major !== before.major ? after.major > before.major : after.minor > before.minor + 1;
  return skips ? { rule: "k3s-minor-skip", component: "k3s", from, to } : undefined;
}

/**
 * liqoctl drives the Liqo of its own version: "always use the liqoctl version matching that of
 * Liqo installed (or to be installed)" (liqotech/liqo docs/installation/liqoctl.md). The pin
 * set's schema holds the same rule; the upgrade checks it again on what it will run.
 */
export function liqoctlMatchesLiqo(liqoctl: string, liqo: string): SkewViolation | undefined {
  const core = (v: string) => v.trim().replace(/^v/, "");
  return core(liqoctl) === core(liqo) ? undefined : { rule: "liqoctl-mismatch", component: "liqo", liqoctl, liqo };
}

/**
 * No peering across Liqo minors: "the establishment of a peering with a remote cluster
 * leveraging a different version of Liqo, net of patch releases, is currently not supported"
 * (liqotech/liqo@v1.0.1 docs/usage/peer.md). A patch release may move on its own; a new minor
 * on a peered agent only when NodeRings already runs that minor (its peering parameters say
 * which Liqo it runs), so the upgrade brings the two sides together instead of apart.
 */
export function liqoPeeringSameMinor(input: {
  from: string;
  to: string;
  peered: boolean;
  platform: string | undefined;
}): SkewViolation | undefined {
  const { from, to, peered, platform } = input;
  if (!peered || minorOf(from) === minorOf(to)) return undefined;
  if (platform !== undefined && minorOf(platform) === minorOf(to)) return undefined;
  return { rule: "liqo-peering-minor", component: "liqo", from, to, platform };
}
