import { createHmac } from "node:crypto";
import { readdir, readFile, readlink, statfs } from "node:fs/promises";
import { hostname, release, totalmem } from "node:os";
import { join } from "node:path";
import { type Problem, UserError } from "@nodekit/errors";
import coerce from "semver/functions/coerce.js";
import gte from "semver/functions/gte.js";
import { errorCodes } from "../errors.ts";
import { type HostNetwork, hostNetwork } from "./host-network.ts";
import { cidrsOverlap, type NetworkPlan } from "./network.ts";

/** What the prechecks know about the machine: read once, assessed purely. */
export interface HostFacts {
  [key: string]:
    | string
    | number
    | boolean
    | null
    | HostFacts["os"]
    | HostFacts["disk"]
    | HostFacts["listening"]
    | HostFacts["network"];
  /** From /etc/os-release; null when it is missing. */
  os: { id: string; versionId: string; prettyName: string } | null;
  kernel: string;
  /** As Go, k3s and Liqo name it: amd64, arm64, arm, or the machine's own word. */
  arch: string;
  hostname: string;
  uid: number;
  memoryBytes: number;
  disk: { path: string; freeBytes: number };
  /** Sockets listening (TCP) or bound (UDP) on the ports the prechecks care about, with their process when readable. */
  listening: Array<{ port: number; protocol: "tcp" | "udp"; process: string | null }>;
  /** The default route's interface, its IPv4 address (k3s's node IP) and subnet; null without a default route. */
  network: HostNetwork;
  /** What runs as PID 1 (/proc/1/comm): `systemd` on a machine k3s's installer sets up a service on. */
  init: string | null;
  /** This machine's identity for NodeRings: {@link machineIdentity} of /etc/machine-id; null without one. */
  machineId: string | null;
}

/**
 * The identity an agent records of the machine that registered it: HMAC-SHA256 of
 * /etc/machine-id under a key of nr's own. machine-id(5): the ID "should be considered
 * confidential, and must not be exposed in untrusted environments"; an application that needs
 * a stable machine identifier "should hash the machine ID with a cryptographic, keyed hash
 * function, using a fixed, application-specific key" (as sd_id128_get_machine_app_specific).
 */
export function machineIdentity(machineIdText: string): string | null {
  const id = machineIdText.trim().toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(id)) return null;
  return createHmac("sha256", "nr.nodekit.dev/agent-machine/v1").update(id).digest("hex");
}

/** A port a check wants free, and for what. */
export interface PortSpec {
  port: number;
  protocol: "tcp" | "udp";
  for: string;
}

/** Where host facts come from: the machine by default; tests give a directory laid out like one. */
export interface HostFactsSource {
  /** The facts; `ports` are looked up besides {@link REQUIRED_PORTS} (the Liqo gateway's, from NodeRings). */
  facts(options?: { ports?: readonly PortSpec[] }): Promise<HostFacts>;
}

/**
 * The ports a single-node agent needs free: the k3s API and kubelet (docs.k3s.io
 * installation/requirements), and Calico's — VXLAN, BGP, Typha, Felix's health endpoint
 * (docs.tigera.io "Network requirements": 179/tcp BGP, 4789/udp VXLAN, 5473/tcp Typha;
 * 9099/tcp is calico-node's health port on the host).
 */
export const REQUIRED_PORTS: readonly PortSpec[] = [
  { port: 6443, protocol: "tcp", for: "the k3s API server" },
  { port: 10250, protocol: "tcp", for: "the kubelet" },
  { port: 4789, protocol: "udp", for: "Calico's VXLAN" },
  { port: 179, protocol: "tcp", for: "Calico's BGP" },
  { port: 5473, protocol: "tcp", for: "Calico's Typha" },
  { port: 9099, protocol: "tcp", for: "Calico's Felix health endpoint" },
];

export interface HostRequirements {
  /** Liqo's WireGuard gateway needs 5.10. */
  minKernel: string;
  architectures: readonly string[];
  minMemoryBytes: number;
  minDiskBytes: number;
  /** Distributions k3s, Calico and Liqo are known to run on (os-release ID). */
  distributions: readonly string[];
}

const GiB = 1024 ** 3;

export const REQUIREMENTS: HostRequirements = {
  minKernel: "5.10",
  architectures: ["amd64", "arm64"],
  minMemoryBytes: 2 * GiB,
  minDiskBytes: 10 * GiB,
  distributions: ["ubuntu", "debian", "rhel", "centos", "rocky", "almalinux", "fedora", "opensuse-leap", "sles", "ol"],
};

const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", x86_64: "amd64", aarch64: "arm64" };

/** The machine's architecture as k3s and Liqo name it. */
function machineArch(arch: string = process.arch): string {
  return ARCH[arch] ?? arch;
}

function parseOsRelease(text: string): HostFacts["os"] {
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match?.[1] !== undefined) values.set(match[1], (match[2] ?? "").replace(/^["']|["']$/g, ""));
  }
  const id = values.get("ID");
  if (id === undefined) return null;
  return { id, versionId: values.get("VERSION_ID") ?? "", prettyName: values.get("PRETTY_NAME") ?? id };
}

/** Ports in /proc/net/{tcp,tcp6} in LISTEN (state 0A) and bound in /proc/net/{udp,udp6}, with each socket's inode. */
function parseSockets(text: string, protocol: "tcp" | "udp"): Array<{ port: number; inode: string }> {
  const out: Array<{ port: number; inode: string }> = [];
  for (const line of text.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    const local = fields[1];
    const state = fields[3];
    const inode = fields[9];
    if (local === undefined || inode === undefined) continue;
    if (protocol === "tcp" && state !== "0A") continue;
    const port = Number.parseInt(local.split(":").at(-1) ?? "", 16);
    if (Number.isFinite(port)) out.push({ port, inode });
  }
  return out;
}

/** inode → process name, from /proc/<pid>/fd (only what this user may read). */
async function socketOwners(root: string, inodes: Set<string>): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  if (inodes.size === 0) return owners;
  const pids = await readdir(join(root, "proc")).catch(() => [] as string[]);
  for (const pid of pids.filter((entry) => /^\d+$/.test(entry))) {
    const fds = await readdir(join(root, "proc", pid, "fd")).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(join(root, "proc", pid, "fd", fd)).catch(() => "");
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined && inodes.has(inode) && !owners.has(inode)) {
        const comm = await readFile(join(root, "proc", pid, "comm"), "utf8").catch(() => "");
        owners.set(inode, `${comm.trim() || "?"} (pid ${pid})`);
      }
    }
  }
  return owners;
}

/**
 * The machine's facts, read from `root` (`/` by default: /etc/os-release, /proc). A test
 * points `root` at a directory laid out like a machine's.
 */
export function createHostFactsSource(options: { root?: string; arch?: string; uid?: number } = {}): HostFactsSource {
  const root = options.root ?? "/";
  const read = async (path: string) => {
    try {
      return await readFile(join(root, path), "utf8");
    } catch (error) {
      throw new UserError(errorCodes.HOST_FACTS_UNREADABLE, `cannot read ${join(root, path)}`, {
        why: (error as NodeJS.ErrnoException).code ?? String(error),
        next: "run the prechecks on the Linux machine to register, or skip them if you checked it yourself",
      });
    }
  };
  return {
    async facts(factsOptions = {}) {
      const ports = [...REQUIRED_PORTS, ...(factsOptions.ports ?? [])];
      // On the machine itself, a system without /proc (not Linux) still has facts to assess.
      const orOs = (path: string, fallback: () => string) =>
        root === "/" ? readFile(join(root, path), "utf8").catch(fallback) : read(path);
      const optional = (path: string) => readFile(join(root, path), "utf8").catch(() => "");
      const [osRelease, kernel, meminfo, archText, hostText, routes, fibTrie, initComm, machineIdText] =
        await Promise.all([
          optional("etc/os-release"),
          orOs("proc/sys/kernel/osrelease", () => release()),
          orOs("proc/meminfo", () => `MemTotal: ${Math.floor(totalmem() / 1024)} kB`),
          optional("proc/sys/kernel/arch"),
          readFile(join(root, "proc/sys/kernel/hostname"), "utf8").catch(() => hostname()),
          optional("proc/net/route"),
          optional("proc/net/fib_trie"),
          optional("proc/1/comm"),
          optional("etc/machine-id"),
        ]);
      const sockets = await Promise.all(
        (["tcp", "tcp6", "udp", "udp6"] as const).map(async (file) => {
          const protocol = file.startsWith("tcp") ? ("tcp" as const) : ("udp" as const);
          const text = await readFile(join(root, "proc/net", file), "utf8").catch(() => "");
          return parseSockets(text, protocol).map((socket) => ({ ...socket, protocol }));
        }),
      );
      const wanted = sockets.flat().filter((s) => ports.some((r) => r.port === s.port && r.protocol === s.protocol));
      const owners = await socketOwners(root, new Set(wanted.map((s) => s.inode)));
      const diskPath = join(root, "var/lib");
      const disk = await statfs(diskPath).catch(() => statfs(root));
      const memKb = Number(/^MemTotal:\s+(\d+)\s+kB/m.exec(meminfo)?.[1] ?? "0");
      const seen = new Set<string>();
      return {
        os: parseOsRelease(osRelease),
        kernel: kernel.trim(),
        arch: options.arch ?? machineArch(archText.trim() || process.arch),
        hostname: hostText.trim(),
        uid: options.uid ?? process.getuid?.() ?? 0,
        memoryBytes: memKb * 1024,
        disk: { path: "/var/lib", freeBytes: disk.bavail * disk.bsize },
        listening: wanted
          .map((s) => ({ port: s.port, protocol: s.protocol, process: owners.get(s.inode) ?? null }))
          .filter((s) => {
            const key = `${s.port}/${s.protocol}`;
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          }),
        network: hostNetwork(routes, fibTrie),
        init: initComm.trim() === "" ? null : initComm.trim(),
        machineId: machineIdentity(machineIdText),
      };
    },
  };
}

/** One check of the host: what was found, what is required, how to fix it. */
export interface HostCheck {
  id: string;
  ok: boolean;
  found: string;
  required: string;
  fix: string;
}

const gib = (bytes: number) => `${(bytes / GiB).toFixed(1)} GiB`;
/** A port held by what registration itself installs (a resumed run after k3s) is not in the way. */
const OURS = /^(k3s|containerd|calico|bird|felix|liqo)/;

/**
 * What the checks know besides the host's files: the CIDRs NodeRings reserves (with the
 * network plan), the Liqo gateway's port, and the version of the kubectl on PATH (null: none).
 */
export interface HostContext {
  network?: { plan: NetworkPlan; reserved: readonly string[] } | undefined;
  ports?: readonly PortSpec[] | undefined;
  kubectl?: string | null | undefined;
}

/** `kubectl wait --for=create` exists since kubectl 1.31 (kubernetes/kubernetes#125868); the phases wait with it. */
const MIN_KUBECTL = "1.31.0";

/**
 * Assesses the facts against the requirements, purely: every check, failed or not, each
 * with found / required / fix. The network plan is checked against the CIDRs NodeRings
 * reserves, the kubectl on PATH against {@link MIN_KUBECTL}, and the context's ports besides
 * {@link REQUIRED_PORTS}, when known.
 */
export function assessHost(
  facts: HostFacts,
  requirements: HostRequirements = REQUIREMENTS,
  context: HostContext = {},
): HostCheck[] {
  const { network } = context;
  const checks: HostCheck[] = [];
  const distro = facts.os;
  checks.push({
    id: "os",
    ok: distro !== null && requirements.distributions.includes(distro.id),
    found: distro === null ? "no /etc/os-release" : distro.prettyName,
    required: `a Linux distribution k3s, Calico and Liqo support (${requirements.distributions.join(", ")})`,
    fix: "register a VM running one of them",
  });
  const kernel = coerce(facts.kernel);
  const minKernel = coerce(requirements.minKernel);
  checks.push({
    id: "kernel",
    ok: kernel !== null && minKernel !== null && gte(kernel, minKernel),
    found: `kernel ${facts.kernel}`,
    required: `kernel ${requirements.minKernel} or newer (Liqo's WireGuard gateway)`,
    fix: "upgrade the kernel (e.g. the distribution's hardware-enablement kernel) and reboot",
  });
  checks.push({
    id: "arch",
    ok: requirements.architectures.includes(facts.arch),
    found: facts.arch,
    required: requirements.architectures.join(" or "),
    fix: "register a VM of a supported architecture",
  });
  checks.push({
    id: "user",
    ok: facts.uid === 0,
    found: `uid ${facts.uid}`,
    required: "root (the k3s installer writes to /etc, /usr/local and systemd)",
    fix: "run it as root, e.g. with sudo -E",
  });
  checks.push({
    id: "init",
    ok: facts.init === "systemd",
    found: facts.init === null ? "no /proc/1/comm" : `PID 1 is ${facts.init}`,
    required: "systemd as PID 1 (nr installs k3s as a systemd service and manages it through it)",
    fix: "register a VM that boots with systemd (a container or a WSL shell is not one)",
  });
  if (context.kubectl !== undefined) {
    const version = context.kubectl === null ? null : coerce(context.kubectl);
    checks.push({
      id: "kubectl",
      ok: context.kubectl === null || (version !== null && gte(version, MIN_KUBECTL)),
      found:
        context.kubectl === null ? "no kubectl on PATH (k3s installs its own)" : `kubectl ${context.kubectl} on PATH`,
      required: `no kubectl on PATH, or kubectl ${MIN_KUBECTL.replace(/\.0$/, "")} or newer (nr waits with kubectl wait --for=create)`,
      fix: "remove the older kubectl from PATH (k3s then links its own, as new as k3s), or put a newer one first on PATH",
    });
  }
  checks.push({
    id: "memory",
    ok: facts.memoryBytes >= requirements.minMemoryBytes,
    found: gib(facts.memoryBytes),
    required: `at least ${gib(requirements.minMemoryBytes)} of memory`,
    fix: "give the VM more memory",
  });
  checks.push({
    id: "disk",
    ok: facts.disk.freeBytes >= requirements.minDiskBytes,
    found: `${gib(facts.disk.freeBytes)} free on ${facts.disk.path}`,
    required: `at least ${gib(requirements.minDiskBytes)} free on ${facts.disk.path} (k3s keeps images and etcd there)`,
    fix: `free space on ${facts.disk.path} or grow the disk`,
  });
  for (const port of [...REQUIRED_PORTS, ...(context.ports ?? [])]) {
    const holder = facts.listening.find((s) => s.port === port.port && s.protocol === port.protocol);
    const ours = holder?.process !== null && holder?.process !== undefined && OURS.test(holder.process);
    checks.push({
      id: `port-${port.port}-${port.protocol}`,
      ok: holder === undefined || ours,
      found:
        holder === undefined
          ? `${port.port}/${port.protocol} free`
          : `${port.port}/${port.protocol} in use${holder.process ? ` by ${holder.process}` : ""}`,
      required: `${port.port}/${port.protocol} free for ${port.for}`,
      fix: `stop what uses ${port.port}/${port.protocol} (ss -lntup shows it)`,
    });
  }
  if (network !== undefined) {
    for (const [name, cidr] of [
      ["pod", network.plan.podCidr],
      ["service", network.plan.serviceCidr],
    ] as const) {
      const clash = network.reserved.filter((reserved) => cidrsOverlap(cidr, reserved));
      checks.push({
        id: `${name}-cidr`,
        ok: clash.length === 0,
        found: clash.length === 0 ? `${name} CIDR ${cidr}` : `${name} CIDR ${cidr} overlaps ${clash.join(", ")}`,
        required: `a ${name} CIDR that does not overlap the CIDRs NodeRings reserves (${network.reserved.join(", ")})`,
        fix: `choose another with --${name}-cidr`,
      });
    }
  }
  return checks;
}

/** The failed checks as problems (source "host", field = the check's id), for one error that lists them all. */
export function hostProblems(checks: readonly HostCheck[]): Problem[] {
  return checks
    .filter((check) => !check.ok)
    .map((check) => ({
      severity: "error" as const,
      source: "this machine",
      path: [check.id],
      message: `found ${check.found}; requires ${check.required}; fix: ${check.fix}`,
    }));
}
