import { isIPv4 } from "node:net";

/** A parsed CIDR: first address as a bigint, prefix length and address width (32 or 128). */
interface Cidr {
  base: bigint;
  prefix: number;
  bits: 32 | 128;
}

function parseCidr(cidr: string): Cidr {
  const [address = "", prefixText = ""] = cidr.split("/");
  const prefix = Number(prefixText);
  const bits = isIPv4(address) ? 32 : 128;
  const value = bits === 32 ? ipv4ToBigInt(address) : ipv6ToBigInt(address);
  const hostBits = BigInt(bits - prefix);
  return { base: (value >> hostBits) << hostBits, prefix, bits };
}

function ipv4ToBigInt(address: string): bigint {
  return address.split(".").reduce((acc, octet) => (acc << 8n) + BigInt(Number(octet)), 0n);
}

function ipv6ToBigInt(address: string): bigint {
  const [head = "", tail] = address.split("::");
  const part = (s: string) => (s === "" ? [] : s.split(":"));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.reduce((acc, group) => (acc << 16n) + BigInt(Number.parseInt(group, 16)), 0n);
}

/**
 * How many nodes a pod CIDR has room for when each node takes one /nodeMaskSize block:
 * 2^(nodeMaskSize − prefix), capped at Number.MAX_SAFE_INTEGER; 0 when the mask is not
 * longer than the prefix.
 */
export function podCidrCapacity(podCIDR: string, nodeMaskSize: number): number {
  const { prefix, bits } = parseCidr(podCIDR);
  if (nodeMaskSize <= prefix || nodeMaskSize > bits) return 0;
  const exponent = nodeMaskSize - prefix;
  return exponent >= 53 ? Number.MAX_SAFE_INTEGER : 2 ** exponent;
}

/** Whether two CIDRs share any address (a /16 inside a /12, for example). */
export function cidrsOverlap(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  if (x.bits !== y.bits) return false;
  const shorter = Math.min(x.prefix, y.prefix);
  const shift = BigInt(x.bits - shorter);
  return x.base >> shift === y.base >> shift;
}
