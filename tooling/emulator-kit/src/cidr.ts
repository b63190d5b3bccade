import ipaddr from "ipaddr.js";

/**
 * How many nodes a pod CIDR has room for when each node takes one /nodeMaskSize block:
 * 2^(nodeMaskSize − prefix), capped at Number.MAX_SAFE_INTEGER; 0 when the mask is not
 * longer than the prefix.
 */
export function podCidrCapacity(podCIDR: string, nodeMaskSize: number): number {
  const [address, prefix] = ipaddr.parseCIDR(podCIDR);
  const bits = address.kind() === "ipv4" ? 32 : 128;
  if (nodeMaskSize <= prefix || nodeMaskSize > bits) return 0;
  const exponent = nodeMaskSize - prefix;
  return exponent >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** exponent;
}

/** Whether two CIDRs share any address (a /16 inside a /12, for example); an IPv4 and an IPv6 one never do. */
export function cidrsOverlap(a: string, b: string): boolean {
  const [x, xPrefix] = ipaddr.parseCIDR(a);
  const [y, yPrefix] = ipaddr.parseCIDR(b);
  const prefix = Math.min(xPrefix, yPrefix);
  if (x instanceof ipaddr.IPv4 && y instanceof ipaddr.IPv4) return x.match(y, prefix);
  if (x instanceof ipaddr.IPv6 && y instanceof ipaddr.IPv6) return x.match(y, prefix);
  return false;
}
