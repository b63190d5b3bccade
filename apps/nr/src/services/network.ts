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

/** Validates the flags into the plan: IPv4 CIDRs, written as their network, not overlapping. */
export function networkPlan(options: { podCidr?: string | undefined; serviceCidr?: string | undefined }): NetworkPlan {
  const podCidr = canonical(options.podCidr ?? DEFAULT_NETWORK.podCidr, "--pod-cidr");
  const serviceCidr = canonical(options.serviceCidr ?? DEFAULT_NETWORK.serviceCidr, "--service-cidr");
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
