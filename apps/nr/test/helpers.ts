import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { type CliResult, type RunCliOptions, repoRoot, runCli, tempDir } from "@nodekit/test-utils";
import type { K3sConfig } from "./stand-ins/k3s-install.ts";
import type { Recorded } from "./stand-ins/world.ts";

// Shared by apps/nr's tests: the CLI built and run as a subprocess, with HOME and NR_HOME
// in a temporary directory of the test's own, and recording stand-ins for the programs
// that cannot run on these machines (the k3s installer, liqoctl).

const execFileAsync = promisify(execFile);

export const FIXTURES = join(repoRoot, "apps/nr/test/fixtures");

export interface NrHome {
  path: string;
  /** ~/.nr */
  nrHome: string;
  /** NR_LOCK_DIR: this test file's "machine", whose one lock every NR_HOME of the file shares. */
  lockDir: string;
  env: Record<string, string>;
  nr(args: string[], options?: Omit<RunCliOptions, "cwd">): Promise<CliResult>;
  cleanup(): Promise<void>;
}

export async function nrHome(prefix = "nr-test-"): Promise<NrHome> {
  const dir = await tempDir(prefix);
  const nr = join(dir.path, ".nr");
  const lockDir = join(dir.path, "machine-lock");
  const env = {
    HOME: dir.path,
    NR_HOME: nr,
    // nr's lock is the machine's (/run/nr for root): every NR_HOME of one test file shares this
    // one instead, as every state on one machine shares /run/nr.
    NR_LOCK_DIR: lockDir,
    XDG_CONFIG_HOME: join(dir.path, "config"),
    XDG_CACHE_HOME: join(dir.path, "cache"),
  };
  return {
    path: dir.path,
    nrHome: nr,
    lockDir,
    env,
    nr: (args, options = {}) => runCli("nr", args, { ...options, cwd: dir.path, env: { ...env, ...options.env } }),
    cleanup: dir.cleanup,
  };
}

/**
 * A directory laid out like a provider VM's, for the prechecks (`--host-root`): a
 * supported distribution and kernel, systemd as PID 1, 8 GiB of memory, nothing on the
 * ports it checks.
 */
export async function hostRoot(
  dir: string,
  overrides: {
    osRelease?: string;
    kernel?: string;
    memKb?: number;
    tcp?: string;
    /** /proc/net/udp's lines after its header. */
    udp?: string;
    arch?: string;
    /** What runs as PID 1 (/proc/1/comm): systemd unless told. */
    init?: string;
    /** /etc/machine-id (32 hex digits): one of this directory's own unless told; null for none. */
    machineId?: string | null;
    hostname?: string;
    /** The address on the default route's interface (eth0, in 10.20.0.0/24); null for a machine without a default route. */
    address?: string | null;
  } = {},
): Promise<string> {
  const address = overrides.address === undefined ? "10.20.0.11" : overrides.address;
  // /proc/net/route's fields are little-endian hex: 0A140000 is 10.20.0.0 written backwards.
  const hex = (ip: string) =>
    ip
      .split(".")
      .map((octet) => Number(octet).toString(16).toUpperCase().padStart(2, "0"))
      .reverse()
      .join("");
  const subnet = address === null ? undefined : `${address.split(".").slice(0, 3).join(".")}.0`;
  const root = join(dir, "host");
  const files: Record<string, string> = {
    "etc/os-release":
      overrides.osRelease ?? 'NAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\nPRETTY_NAME="Ubuntu 24.04.3 LTS"\n',
    "proc/sys/kernel/osrelease": `${overrides.kernel ?? "6.8.0-85-generic"}\n`,
    "proc/sys/kernel/arch": `${overrides.arch ?? "x86_64"}\n`,
    "proc/sys/kernel/hostname": `${overrides.hostname ?? "pve-node-1"}\n`,
    "proc/meminfo": `MemTotal:       ${overrides.memKb ?? 8 * 1024 * 1024} kB\nMemFree:         1000 kB\n`,
    "proc/net/tcp": `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n${overrides.tcp ?? ""}`,
    "proc/net/udp": `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n${overrides.udp ?? ""}`,
    "proc/1/comm": `${overrides.init ?? "systemd"}\n`,
    ...(overrides.machineId === null
      ? {}
      : { "etc/machine-id": `${overrides.machineId ?? createHash("md5").update(root).digest("hex")}\n` }),
    "var/lib/.keep": "",
    "proc/net/route":
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
      (subnet === undefined
        ? ""
        : `eth0\t00000000\t${hex(subnet.replace(/0$/, "1"))}\t0003\t0\t0\t100\t00000000\t0\t0\t0\n` +
          `eth0\t${hex(subnet)}\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n`),
    "proc/net/fib_trie":
      address === null || subnet === undefined
        ? "Main:\n  +-- 0.0.0.0/0 3 0 5\n"
        : `Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n     +-- ${subnet}/24 2 0 2\n        |-- ${subnet}\n           /24 link UNICAST\n        |-- ${address}\n           /32 host LOCAL\nLocal:\n  +-- 127.0.0.0/8 2 0 2\n     |-- 127.0.0.1\n        /32 host LOCAL\n`,
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

const STAND_INS = join(repoRoot, "apps/nr/test/stand-ins");

export interface StandIns {
  /** The directory on PATH with `k3s-install.sh` and `liqoctl` (and `k3s-uninstall.sh` once k3s is "installed"). */
  bin: string;
  /** Where the stand-ins keep their files. */
  state: string;
  /** Every call the stand-ins saw, in order. */
  records(): Promise<Recorded[]>;
  /** What k3s runs with now (`k3s-config.json`), or undefined when it is not installed. */
  k3sConfig(): Promise<K3sConfig | undefined>;
  /** What reached NodeRings' cluster through Liqo's reflection (Secrets, ServiceAccount tokens). */
  reflected(): Promise<Array<{ namespace: string; kind: string; name?: string; data?: Record<string, string> }>>;
}

/**
 * The recording stand-ins for the k3s installer and liqoctl (tests only), on PATH as
 * `k3s-install.sh` and `liqoctl`: apps/nr/test/stand-ins/k3s-install.ts and liqoctl.ts, each
 * as strict as the program it stands for (their headers say which upstream behaviour each
 * models, and where it is documented). Each records its argv and environment in
 * `<dir>/stand-ins/records.jsonl`, then acts on the agent cluster (`kubeconfig`) as the real
 * one would.
 */
export async function standIns(
  dir: string,
  options: { kubeconfig: string; platformClusterId: string; nodeIp?: string },
): Promise<StandIns> {
  const bin = join(dir, "stand-ins", "bin");
  const state = join(dir, "stand-ins", "state");
  await mkdir(bin, { recursive: true });
  await mkdir(state, { recursive: true });
  await writeFile(join(state, "records.jsonl"), "");
  const env = {
    NR_STANDIN_KUBECONFIG: options.kubeconfig,
    NR_STANDIN_STATE: state,
    NR_STANDIN_BIN: bin,
    NR_STANDIN_PLATFORM_CLUSTER_ID: options.platformClusterId,
    NR_STANDIN_NODE_IP: options.nodeIp ?? "10.20.0.11",
  };
  const exports = Object.entries(env)
    .map(([name, value]) => `${name}='${value}'`)
    .join(" ");
  for (const [name, script] of [
    ["k3s-install.sh", "k3s-install.ts"],
    ["liqoctl", "liqoctl.ts"],
  ] as const) {
    // nr passes the programs it runs only a few variables: the shim sets the stand-in's own.
    await writeFile(
      join(bin, name),
      `#!/bin/sh\nexport ${exports}\nexec '${process.execPath}' '${join(STAND_INS, script)}' "$@"\n`,
      { mode: 0o755 },
    );
  }
  const readJsonl = async <T>(file: string): Promise<T[]> => {
    const text = await readFile(join(state, file), "utf8").catch(() => "");
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as T);
  };
  return {
    bin,
    state,
    records: () => readJsonl<Recorded>("records.jsonl"),
    async k3sConfig() {
      const text = await readFile(join(state, "k3s-config.json"), "utf8").catch(() => undefined);
      return text === undefined ? undefined : (JSON.parse(text) as K3sConfig);
    },
    reflected: () => readJsonl("noderings-cluster.jsonl"),
  };
}

/** `kubectl --kubeconfig K ...args`, with stdin; rejects on a non-zero exit. */
export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = execFileAsync("kubectl", ["--kubeconfig", kubeconfig, ...args], { encoding: "utf8", timeout: 60_000 });
  if (input !== undefined) child.child.stdin?.end(input);
  const { stdout } = await child;
  return stdout;
}

/**
 * A stand-in for Calico's tigera operator and calico-node (tests only: nothing runs pods
 * here), polling every 300 ms. TigeraStatus `calico` is Available while the Installation
 * `default` exists and the operator's Deployment `tigera-operator/tigera-operator` is there
 * (Calico's documented readiness signal, docs.tigera.io "Install Calico" / the k3s
 * quickstart's `kubectl wait … tigerastatus`); without the operator it is not. While Calico is
 * Available, a node the k3s stand-in registered NotReady for want of a CNI ("cni plugin not
 * initialized", k3s-io/k3s#12583) is marked Ready, as the kubelet reports once calico-node
 * has written the CNI config. Stops when the returned function is called.
 */
export function calicoOperator(kubeconfig: string): () => void {
  let stopped = false;
  let busy = false;
  const exists = (args: string[]) =>
    kubectl(kubeconfig, ["get", ...args, "-o", "name"]).then(
      () => true,
      () => false,
    );
  const tick = async () => {
    if (stopped || busy) return;
    busy = true;
    try {
      if (!(await exists(["installations.operator.tigera.io/default"]))) return;
      const available = await exists(["deployment/tigera-operator", "-n", "tigera-operator"]);
      const current = await kubectl(kubeconfig, ["get", "tigerastatus/calico", "-o", "json"]).catch(() => undefined);
      const was = current === undefined ? undefined : conditionStatus(current, "Available");
      if (current === undefined) {
        await kubectl(
          kubeconfig,
          ["apply", "-f", "-"],
          JSON.stringify({
            apiVersion: "operator.tigera.io/v1",
            kind: "TigeraStatus",
            metadata: { name: "calico" },
            spec: {},
          }),
        );
      }
      if (was !== (available ? "True" : "False")) {
        const at = new Date().toISOString();
        await kubectl(kubeconfig, [
          "patch",
          "tigerastatus/calico",
          "--subresource=status",
          "--type=merge",
          "-p",
          JSON.stringify({
            status: {
              conditions: [
                available
                  ? {
                      type: "Available",
                      status: "True",
                      reason: "AllObjectsAvailable",
                      message: "All objects are available (stand-in)",
                      lastTransitionTime: at,
                    }
                  : {
                      type: "Available",
                      status: "False",
                      reason: "ResourceNotReady",
                      message: "the tigera operator is not running (stand-in)",
                      lastTransitionTime: at,
                    },
                {
                  type: "Degraded",
                  status: available ? "False" : "True",
                  reason: available ? "AllObjectsAvailable" : "ResourceNotReady",
                  message: "",
                  lastTransitionTime: at,
                },
              ],
            },
          }),
        ]);
      }
      if (!available) return;
      const nodes = JSON.parse(await kubectl(kubeconfig, ["get", "nodes", "-o", "json"])) as {
        items: Array<{
          metadata: { name: string };
          status?: { conditions?: Array<{ type: string; status: string; message?: string }> };
        }>;
      };
      for (const node of nodes.items) {
        const ready = node.status?.conditions?.find((c) => c.type === "Ready");
        if (ready?.status !== "False" || !ready.message?.includes("cni plugin not initialized")) continue;
        const at = new Date().toISOString();
        await kubectl(kubeconfig, [
          "patch",
          `node/${node.metadata.name}`,
          "--subresource=status",
          "--type=strategic",
          "-p",
          JSON.stringify({
            status: {
              conditions: [
                {
                  type: "Ready",
                  status: "True",
                  reason: "KubeletReady",
                  message: "kubelet is posting ready status",
                  lastHeartbeatTime: at,
                  lastTransitionTime: at,
                },
              ],
            },
          }),
        ]);
      }
    } catch {
      // The next tick tries again, as a controller's next reconcile would.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), 300);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

function conditionStatus(json: string, type: string): string | undefined {
  const parsed = JSON.parse(json) as { status?: { conditions?: Array<{ type: string; status: string }> } };
  return parsed.status?.conditions?.find((c) => c.type === type)?.status;
}
