/** Whether two IPv4 CIDRs share any address (the contract's CIDRs are IPv4: Liqo's defaults and k3s's are). */
export function cidrsOverlap(a: string, b: string): boolean {
  const x = parse(a);
  const y = parse(b);
  const prefix = Math.min(x.prefix, y.prefix);
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return (x.base & mask) >>> 0 === (y.base & mask) >>> 0;
}

function parse(cidr: string): { base: number; prefix: number } {
  const [address = "", prefixText = "32"] = cidr.split("/");
  const base = address.split(".").reduce((acc, octet) => ((acc << 8) >>> 0) + Number(octet), 0) >>> 0;
  return { base, prefix: Number(prefixText) };
}
