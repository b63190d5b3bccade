import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

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
