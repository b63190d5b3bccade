// Where this machine is on its network, read as k3s finds it: the interface of the default
// route, its IPv4 address (k3s's node IP, which its serving certificate covers) and its
// subnet (the "subnet of the cluster nodes" Liqo wants reserved). From /proc/net/route and
// /proc/net/fib_trie, so a test gives a directory laid out like a machine.

/** The default route's interface, its address and subnet; null when there is no default route or no address on it. */
export type HostNetwork = { interface: string; address: string; subnet: string } | null;

/** A /proc/net/route hex field (little-endian IPv4) as a number. */
function routeHex(hex: string): number {
  const value = Number.parseInt(hex, 16);
  // Little-endian: the first byte of the address is the lowest of the number.
  return (
    ((value & 0xff) * 2 ** 24 +
      ((value >>> 8) & 0xff) * 2 ** 16 +
      ((value >>> 16) & 0xff) * 2 ** 8 +
      ((value >>> 24) & 0xff)) >>>
    0
  );
}

const dotted = (value: number) => [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
const parseIp = (ip: string) => ip.split(".").reduce((acc, octet) => acc * 256 + Number(octet), 0);
const prefixOf = (mask: number) => mask.toString(2).replace(/0+$/, "").length;

interface Route {
  iface: string;
  destination: number;
  gateway: number;
  mask: number;
  metric: number;
}

function parseRoutes(text: string): Route[] {
  return text
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 8)
    .map((fields) => ({
      iface: fields[0] ?? "",
      destination: routeHex(fields[1] ?? "0"),
      gateway: routeHex(fields[2] ?? "0"),
      metric: Number(fields[6] ?? "0"),
      mask: routeHex(fields[7] ?? "0"),
    }));
}

/** The machine's own IPv4 addresses: the `/32 host LOCAL` entries of /proc/net/fib_trie. */
function localAddresses(fibTrie: string): string[] {
  const found = new Set<string>();
  let last: string | undefined;
  for (const line of fibTrie.split("\n")) {
    const leaf = /\|--\s+(\d+\.\d+\.\d+\.\d+)\s*$/.exec(line);
    if (leaf?.[1] !== undefined) last = leaf[1];
    else if (last !== undefined && /\/32 host LOCAL/.test(line)) found.add(last);
  }
  return [...found].filter((ip) => !ip.startsWith("127."));
}

/**
 * The default route's interface (the lowest metric), the first local address in a subnet
 * routed on that interface, and that subnet; pure, from the two files' text.
 */
export function hostNetwork(route: string, fibTrie: string): HostNetwork {
  const routes = parseRoutes(route);
  const defaults = routes.filter((r) => r.destination === 0 && r.mask === 0).sort((a, b) => a.metric - b.metric);
  const iface = defaults[0]?.iface;
  if (iface === undefined) return null;
  const addresses = localAddresses(fibTrie);
  for (const link of routes.filter((r) => r.iface === iface && r.mask !== 0 && r.gateway === 0)) {
    const size = 2 ** (32 - prefixOf(link.mask));
    const address = addresses.find((ip) => {
      const value = parseIp(ip);
      return value >= link.destination && value < link.destination + size;
    });
    if (address !== undefined) {
      return { interface: iface, address, subnet: `${dotted(link.destination)}/${prefixOf(link.mask)}` };
    }
  }
  return null;
}
