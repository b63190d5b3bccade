import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

// What the recording stand-ins (k3s-install.ts, liqoctl.ts) share: the world they act on
// — the agent cluster (a real kube-apiserver: the test tier's, or the sandbox's agent
// cluster), NodeRings' side (the emulator's peering server, which no program can reach) and
// the files they keep — and how they record each call for the tests. For apps/nr's tests and
// the sandbox's demo shell only, never a user's PATH. Run by node as they are: node's
// built-ins, no workspace package.

/** What a shim on PATH tells its stand-in (nr passes none of its own environment through). */
export interface World {
  /** The agent cluster's admin kubeconfig (what k3s writes to /etc/rancher/k3s/k3s.yaml). */
  kubeconfig: string;
  /** Where the stand-ins keep their own files: records, k3s's running config, what reached NodeRings. */
  state: string;
  /** The directory on PATH the stand-ins live in (k3s's BIN_DIR: /usr/local/bin on a VM). */
  bin: string;
  /** NodeRings' Liqo cluster id (its ForeignCluster's name on the agent). */
  platformClusterId: string;
  /** The address k3s would take from the default route's interface (its node IP). */
  nodeIp: string;
}

export function world(): World {
  const need = (name: string) => {
    const value = process.env[name];
    if (value === undefined || value === "") throw new Error(`stand-in: ${name} is not set by its shim`);
    return value;
  };
  return {
    kubeconfig: need("NR_STANDIN_KUBECONFIG"),
    state: need("NR_STANDIN_STATE"),
    bin: need("NR_STANDIN_BIN"),
    platformClusterId: need("NR_STANDIN_PLATFORM_CLUSTER_ID"),
    nodeIp: need("NR_STANDIN_NODE_IP"),
  };
}

/** One call as a stand-in saw it, appended to `<state>/records.jsonl`. */
export interface Recorded {
  tool: "k3s-install" | "liqoctl" | "k3s-uninstall";
  argv: string[];
  env: Record<string, string | undefined>;
  /** For liqoctl peer and unpeer: each kubeconfig as it was when liqoctl ran. */
  kubeconfigs?: { local: KubeconfigSeen; remote: KubeconfigSeen };
  exitCode?: number;
}

export interface KubeconfigSeen {
  path: string;
  mode: number;
  /** Whether it holds a bearer token (a peering user's or a consumer credential's). */
  hasToken: boolean;
  server: string;
}

export function record(w: World, entry: Recorded): void {
  appendFileSync(join(w.state, "records.jsonl"), `${JSON.stringify(entry)}\n`);
}

/** `kubectl --kubeconfig <agent> …args` (stdin optional): stdout, or throws with kubectl's stderr. */
export function kubectl(w: World, args: string[], input?: string): string {
  return execFileSync("kubectl", ["--kubeconfig", w.kubeconfig, ...args], {
    input,
    encoding: "utf8",
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** `kubectl get … -o json`, or undefined when it is not there. */
export function getJson(w: World, args: string[]): Record<string, unknown> | undefined {
  try {
    return JSON.parse(kubectl(w, ["get", ...args, "-o", "json"])) as Record<string, unknown>;
  } catch (error) {
    if (
      /NotFound|not found|the server doesn't have a resource type/.test(String((error as { stderr?: string }).stderr))
    )
      return undefined;
    throw error;
  }
}

export function apply(w: World, ...items: object[]): void {
  kubectl(w, ["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items }));
}

export function patchStatus(w: World, what: string, status: object, namespace?: string): void {
  kubectl(w, [
    "patch",
    what,
    ...(namespace === undefined ? [] : ["-n", namespace]),
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status }),
  ]);
}

/** A JSON file of the stand-in's own, or `fallback` when it is not there. */
export function readState<T>(w: World, name: string, fallback: T): T {
  const file = join(w.state, name);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : fallback;
}

/**
 * The flags of a Go (cobra/pflag, urfave/cli) command line: `--name value`, `--name=value`,
 * repeated ones kept in order, booleans as "true"; the rest are the positional arguments.
 */
export function parseFlags(
  argv: readonly string[],
  booleans: ReadonlySet<string>,
): { flags: Map<string, string[]>; args: string[] } {
  const flags = new Map<string, string[]>();
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (!arg.startsWith("--")) {
      args.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (booleans.has(name)) value = "true";
    else {
      const next = argv[i + 1];
      if (next === undefined) fail(`flag needs an argument: --${name}`);
      value = next;
      i++;
    }
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { flags, args };
}

/** Exits as the real program does on an error: its message on stderr, exit 1. */
export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Go's time.ParseDuration, as liqoctl's --timeout flags take it. */
export function isGoDuration(text: string): boolean {
  return /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text);
}

export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** An IPv4 CIDR's network and prefix, or undefined. */
export function parseCidr(text: string): { base: number; prefix: number } | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  if (match === null) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const prefix = Number(match[5]);
  if (octets.some((octet) => octet > 255) || prefix > 32) return undefined;
  const value = octets.reduce((acc, octet) => acc * 256 + octet, 0);
  const size = 2 ** (32 - prefix);
  return { base: Math.floor(value / size) * size, prefix };
}

export function cidrContains(cidr: string, ip: string): boolean {
  const net = parseCidr(cidr);
  const addr = parseCidr(`${ip}/32`);
  if (net === undefined || addr === undefined) return false;
  const size = 2 ** (32 - net.prefix);
  return addr.base >= net.base && addr.base < net.base + size;
}

/** A kubeconfig's server and whether it carries a token (JSON or the simple YAML kubectl writes). */
export function readKubeconfig(path: string): KubeconfigSeen | undefined {
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, "utf8");
  const server = /"?server"?\s*:\s*"?([^"\s,]+)"?/.exec(text)?.[1] ?? "";
  const hasToken = /"?token"?\s*:\s*"?[A-Za-z0-9._~+/=-]{8,}"?/.test(text);
  return { path, mode: statSync(path).mode & 0o777, hasToken, server };
}
