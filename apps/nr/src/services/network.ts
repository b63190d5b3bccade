import { UserError } from "@nodekit/errors";
import ipaddr from "ipaddr.js";
import { errorCodes } from "../errors.ts";

/**
 * The one network plan of a registration: chosen once, used by k3s (--cluster-cidr,
 * --service-cidr), Calico (its IP pool) and Liqo (--pod-cidr, --service-cidr), and sent
 * to NodeRings with the outbound peering request.
 */
export interface NetworkPlan {
  podCidr: string;
  serviceCidr: string;
}

/** k3s's own defaults, which Liqo's `install k3s` assumes too. */
const DEFAULT_NETWORK: NetworkPlan = { podCidr: "10.42.0.0/16", serviceCidr: "10.43.0.0/16" };

function parse(cidr: string, flag: string): [ipaddr.IPv4, number] {
  try {
    const [address, prefix] = ipaddr.IPv4.parseCIDR(cidr);
    return [address, prefix];
  } catch {
    throw new UserError(errorCodes.NETWORK_PLAN_INVALID, `${flag} ${JSON.stringify(cidr)} is not an IPv4 CIDR`, {
      next: `give it as address/prefix, e.g. ${flag} ${flag === "--pod-cidr" ? DEFAULT_NETWORK.podCidr : DEFAULT_NETWORK.serviceCidr}`,
    });
  }
}

/** Whether two IPv4 CIDRs share an address. */
export function cidrsOverlap(a: string, b: string): boolean {
  const [x, xp] = ipaddr.IPv4.parseCIDR(a);
  const [y, yp] = ipaddr.IPv4.parseCIDR(b);
  return x.match(y, Math.min(xp, yp));
}

/** The network address of a CIDR as written canonically (`10.42.0.0/16` for `10.42.3.4/16`). */
function canonical(cidr: string, flag: string): string {
  const [address, prefix] = parse(cidr, flag);
  const bytes = address.toByteArray();
  const value = bytes.reduce((acc, byte) => acc * 256 + byte, 0);
  const size = 2 ** (32 - prefix);
  const base = Math.floor(value / size) * size;
  const network = [24, 16, 8, 0].map((shift) => Math.floor(base / 2 ** shift) % 256).join(".");
  return `${network}/${prefix}`;
}

/**
 * Validates the flags into the plan: IPv4 CIDRs, written as their network, not overlapping.
 * A range not given is the recorded one (an earlier run's), else k3s's default.
 */
export function networkPlan(
  options: { podCidr?: string | undefined; serviceCidr?: string | undefined },
  recorded?: NetworkPlan,
): NetworkPlan {
  const podCidr = canonical(options.podCidr ?? recorded?.podCidr ?? DEFAULT_NETWORK.podCidr, "--pod-cidr");
  const serviceCidr = canonical(
    options.serviceCidr ?? recorded?.serviceCidr ?? DEFAULT_NETWORK.serviceCidr,
    "--service-cidr",
  );
  if (cidrsOverlap(podCidr, serviceCidr)) {
    throw new UserError(
      errorCodes.NETWORK_PLAN_INVALID,
      `the pod CIDR ${podCidr} overlaps the service CIDR ${serviceCidr}`,
      {
        why: "pods and services need addresses of their own",
        next: "choose two ranges that do not overlap, e.g. the defaults 10.42.0.0/16 and 10.43.0.0/16",
      },
    );
  }
  return { podCidr, serviceCidr };
}

/**
 * Refuses a network plan other than the one k3s was installed with: k3s's cluster and
 * service CIDRs cannot be changed on a live cluster (Calico's pool and Liqo's remapping are
 * built on them), and re-running the installer with other flags would restart k3s with them.
 * `recorded` is the plan of a state in which the k3s phase ran; undefined when it did not.
 */
export function assertNetworkUnchanged(plan: NetworkPlan, recorded: NetworkPlan | undefined): void {
  if (recorded === undefined) return;
  const changed = (["podCidr", "serviceCidr"] as const).filter((key) => plan[key] !== recorded[key]);
  if (changed.length === 0) return;
  const flag = (key: "podCidr" | "serviceCidr") => (key === "podCidr" ? "--pod-cidr" : "--service-cidr");
  throw new UserError(
    errorCodes.NETWORK_PLAN_CHANGED,
    changed
      .map(
        (key) =>
          `${flag(key)} ${plan[key]} is not the ${key === "podCidr" ? "pod" : "service"} CIDR k3s was installed with, ${recorded[key]}`,
      )
      .join("; ")
      .concat("; nothing was done"),
    {
      why: "the network plan is fixed once k3s is installed: k3s, Calico's IP pool and Liqo are built on it, and re-running the installer with other ranges would restart k3s with them",
      next: [
        `leave ${changed.map(flag).join(" and ")} out (the recorded ${changed.map((key) => recorded[key]).join(" and ")} are used)`,
        "or remove k3s first (k3s-uninstall.sh removes the cluster and everything in it), then register again with --restart",
      ],
      facts: { podCidr: recorded.podCidr, serviceCidr: recorded.serviceCidr },
    },
  );
}
