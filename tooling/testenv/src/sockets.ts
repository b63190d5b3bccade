import { readdir, readFile, readlink } from "node:fs/promises";
import { BlockList } from "node:net";

// What a process's sockets are connected to, read from Linux's /proc: how the network-safety
// test proves that kube-apiserver dials nothing off loopback.

export interface SocketEntry {
  protocol: "tcp" | "tcp6" | "udp" | "udp6";
  local: string;
  remote: string;
  /** The kernel's state number in hex, as /proc prints it ("01" ESTABLISHED, "02" SYN_SENT, "0A" LISTEN). */
  state: string;
  inode: number;
}

/** An IPv4 address as /proc/net/tcp prints it: 8 hex digits, one 32-bit word in host (little-endian) order. */
function ipv4(hex: string): string {
  const bytes = [0, 2, 4, 6].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).reverse();
  return bytes.join(".");
}

/** An IPv6 address as /proc/net/tcp6 prints it: four 32-bit words, each in host order. Uncompressed. */
function ipv6(hex: string): string {
  const groups: string[] = [];
  for (let word = 0; word < 4; word++) {
    const w = hex.slice(word * 8, word * 8 + 8).toLowerCase();
    groups.push(`${w.slice(6, 8)}${w.slice(4, 6)}`, `${w.slice(2, 4)}${w.slice(0, 2)}`);
  }
  return groups.join(":");
}

function address(field: string, family: 4 | 6): string {
  const [host = "", port = ""] = field.split(":");
  const ip = family === 4 ? ipv4(host) : ipv6(host);
  const portNumber = Number.parseInt(port, 16);
  return family === 4 ? `${ip}:${portNumber}` : `[${ip}]:${portNumber}`;
}

/** The entries of one /proc/net/{tcp,tcp6,udp,udp6} table. */
export function parseSocketTable(text: string, protocol: SocketEntry["protocol"]): SocketEntry[] {
  const family = protocol.endsWith("6") ? 6 : 4;
  return text
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 10)
    .map((fields) => ({
      protocol,
      local: address(fields[1] ?? "", family),
      remote: address(fields[2] ?? "", family),
      state: fields[3] ?? "",
      inode: Number(fields[9]),
    }));
}

const loopback = new BlockList();
loopback.addSubnet("127.0.0.0", 8, "ipv4"); // BlockList matches IPv4-mapped IPv6 addresses against it too
loopback.addAddress("::1", "ipv6");
const unspecified = new BlockList();
unspecified.addAddress("0.0.0.0", "ipv4");
unspecified.addAddress("::", "ipv6");

function peerHost(entry: SocketEntry): { host: string; family: "ipv4" | "ipv6" } {
  if (entry.protocol.endsWith("6")) return { host: entry.remote.slice(1, entry.remote.indexOf("]")), family: "ipv6" };
  return { host: entry.remote.slice(0, entry.remote.lastIndexOf(":")), family: "ipv4" };
}

/** True when the socket has a peer and that peer is not on loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). */
export function leavesLoopback(entry: SocketEntry): boolean {
  const { host, family } = peerHost(entry);
  if (unspecified.check(host, family)) return false; // listening or unconnected: no peer
  return !loopback.check(host, family);
}

/** Every socket of the network namespace that process `pid` is in (TIME_WAIT ones, whose inode is 0, included). */
async function namespaceSockets(pid: number): Promise<SocketEntry[]> {
  const protocols = ["tcp", "tcp6", "udp", "udp6"] as const;
  const tables = await Promise.all(
    protocols.map(async (protocol) =>
      parseSocketTable(await readFile(`/proc/${pid}/net/${protocol}`, "utf8").catch(() => ""), protocol),
    ),
  );
  return tables.flat();
}

/**
 * The sockets process `pid` holds now: its network namespace's sockets narrowed to the inodes
 * behind the process's own file descriptors.
 */
export async function socketsOf(pid: number): Promise<SocketEntry[]> {
  const fdDir = `/proc/${pid}/fd`;
  const inodes = new Set<number>();
  for (const fd of await readdir(fdDir)) {
    const target = await readlink(`${fdDir}/${fd}`).catch(() => ""); // an fd may close while we look
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(Number(match[1]));
  }
  return (await namespaceSockets(pid)).filter((entry) => inodes.has(entry.inode));
}

/**
 * True when process `pid` itself (not another process of its namespace) listens on every one
 * of `ports` on 127.0.0.1: how a start-up that picked free ports knows its daemon got them.
 */
export async function listensOn(pid: number, ports: readonly number[]): Promise<boolean> {
  const sockets = await socketsOf(pid).catch(() => []); // it may have exited
  const bound = new Set(sockets.filter((socket) => socket.state === "0A").map((socket) => socket.local));
  return ports.every((port) => bound.has(`127.0.0.1:${port}`));
}

export interface WatchSocketsOptions {
  /**
   * Addresses whose every socket in the namespace counts, whoever holds it: a connection closed
   * between two samples is gone from the process's descriptors but stays in the table as
   * TIME_WAIT (for a minute) on the side that closed it. Sockets to them that exist when the
   * watch starts are left out.
   */
  peers?: string[];
  /** Default 5 ms. */
  intervalMs?: number;
}

export interface SocketWatch {
  /** Stops watching after one last look; resolves to every socket seen that counts (deduplicated). */
  stop(): Promise<SocketEntry[]>;
  /** How many times the tables were read: a watch that never looked proves nothing. */
  readonly samples: number;
}

/**
 * Reads the sockets every few milliseconds until stop(), keeping each one of process `pid`
 * whose peer is off loopback, and each one in its namespace whose peer is one of `peers`.
 * A connection attempt (SYN_SENT) lasts at least a round trip, and toward an address that does
 * not answer, the dial timeout; a short connection that is already closed leaves TIME_WAIT.
 * Resolves once the first look is taken.
 */
export async function watchSockets(pid: number, options: WatchSocketsOptions = {}): Promise<SocketWatch> {
  const watched = new BlockList();
  for (const peer of options.peers ?? []) watched.addAddress(peer, peer.includes(":") ? "ipv6" : "ipv4");
  const toPeer = (entry: SocketEntry) => {
    const { host, family } = peerHost(entry);
    return watched.check(host, family);
  };
  const key = (entry: SocketEntry) => `${entry.protocol} ${entry.local} ${entry.remote}`;
  const seen = new Map<string, SocketEntry>();
  let before: Set<string> | undefined;
  let samples = 0;
  const sample = async () => {
    const [own, all] = await Promise.all([socketsOf(pid), namespaceSockets(pid)]);
    before ??= new Set(all.filter(toPeer).map(key));
    const earlier = before;
    for (const entry of own) if (leavesLoopback(entry)) seen.set(key(entry), entry);
    for (const entry of all) if (toPeer(entry) && !earlier.has(key(entry))) seen.set(key(entry), entry);
    samples++;
  };
  let running = true;
  let wake = () => {};
  await sample();
  const loop = (async () => {
    while (running) {
      await new Promise<void>((resolvePromise) => {
        const timer = setTimeout(resolvePromise, options.intervalMs ?? 5);
        wake = () => {
          clearTimeout(timer);
          resolvePromise();
        };
      });
      if (running) await sample();
    }
  })();
  return {
    get samples() {
      return samples;
    },
    async stop() {
      running = false;
      wake();
      await loop;
      await sample();
      return [...seen.values()];
    },
  };
}
