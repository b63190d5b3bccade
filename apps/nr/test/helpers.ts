import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { NR_FIXTURES } from "@nodekit/nr-standins";
import { type CliResult, type RunCliOptions, runCli, tempDir } from "@nodekit/test-utils";

// Shared by apps/nr's tests: the CLI built and run as a subprocess, with HOME and NR_HOME
// in a temporary directory of the test's own. The recording stand-ins for the programs that
// cannot run on these machines (the k3s installer, liqoctl, Calico's operator) and the
// fixtures nr is pointed at are @nodekit/nr-standins (tooling/nr-standins), which the
// sandbox's demo shell uses too.

export { calicoOperator, type StandIns, standIns } from "@nodekit/nr-standins";

const execFileAsync = promisify(execFile);

export const FIXTURES = NR_FIXTURES;

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

/** `kubectl --kubeconfig K ...args`, with stdin; rejects on a non-zero exit. */
export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = execFileAsync("kubectl", ["--kubeconfig", kubeconfig, ...args], { encoding: "utf8", timeout: 60_000 });
  if (input !== undefined) child.child.stdin?.end(input);
  const { stdout } = await child;
  return stdout;
}
