import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

// Runs a command in a Linux network namespace of its own in which only loopback is up, so that
// nothing it starts (tests, kube-apiserver, kubectl, helm, clusterctl) can reach anything but
// 127.0.0.1 / ::1, even by mistake: a dial elsewhere fails at once with "network is unreachable".

/** Set in the command's environment when it runs isolated; tests may check it. */
export const isolationMarker = { name: "NODEKIT_TESTENV_NETWORK", value: "loopback-only" } as const;

/** The namespace's one address that is not loopback (TEST-NET-2, RFC 5737), where the platform allows it. */
export const ownInterface = { name: "nodekit0", address: "198.51.100.1" } as const;

export type Isolation =
  /** `prefix` followed by the command runs it isolated. */
  { isolated: true; prefix: string[]; how: string } | { isolated: false; reason: string };

export interface LoopbackOnlyOptions {
  platform?: NodeJS.Platform;
  /** The real user and group: root creates the namespace directly, anyone else through a user namespace. */
  uid?: number;
  gid?: number;
  /** Where `unshare` and `ip` are looked for (PATH, then /usr/sbin, /sbin). */
  env?: NodeJS.ProcessEnv;
  /** Runs a command and resolves to its exit code and stderr; the default spawns it. */
  probe?: (argv: string[]) => Promise<{ code: number | null; stderr: string }>;
}

function findExecutable(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = [...(env.PATH ?? "").split(delimiter), "/usr/sbin", "/sbin", "/usr/bin", "/bin"].filter(Boolean);
  for (const dir of dirs) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

function spawnProbe(argv: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolvePromise) => {
    const [command = "", ...args] = argv;
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", (error) => resolvePromise({ code: 127, stderr: error.message }));
    child.on("close", (code) => resolvePromise({ code, stderr }));
  });
}

/**
 * How to run a command with only loopback, or why it cannot be done here. Root gets
 * `unshare --net`; another user gets a user namespace as root to bring `lo` up, then a nested
 * one that maps them back to their own uid and gid (so files and permissions look as they
 * do outside). Either way the prefix is tried once with `true` before it is offered.
 */
export async function loopbackOnly(options: LoopbackOnlyOptions = {}): Promise<Isolation> {
  const platform = options.platform ?? process.platform;
  if (platform !== "linux") return { isolated: false, reason: `network namespaces are Linux's; this is ${platform}` };
  const env = options.env ?? process.env;
  const unshare = findExecutable("unshare", env);
  const ip = findExecutable("ip", env);
  if (!unshare || !ip) {
    return {
      isolated: false,
      reason: `${[unshare ? "" : "unshare", ip ? "" : "ip"].filter(Boolean).join(" and ")} not found`,
    };
  }
  const uid = options.uid ?? process.getuid?.() ?? 0;
  const gid = options.gid ?? process.getgid?.() ?? 0;
  // Brings lo up; then gives the namespace one address of its own that is not loopback, on a
  // veth pair whose both ends are in it, with no route beyond that address (and no IPv6
  // link-local ones): tests that need "a non-loopback address of this machine" keep one, and
  // traffic to it is still delivered inside. Then runs the command (as the original user when not
  // root). Where the veth cannot be made, only lo is there.
  const own = ownInterface.name;
  const peer = `${own}p`;
  const setUp = `"$ip" link set lo up || exit 1
{ "$ip" link add ${own} type veth peer name ${peer} &&
  "$ip" link set ${own} addrgenmode none && "$ip" link set ${peer} addrgenmode none &&
  "$ip" addr add ${ownInterface.address}/32 dev ${own} &&
  "$ip" link set ${peer} up && "$ip" link set ${own} up; } 2>/dev/null`;
  const prefix =
    uid === 0
      ? [unshare, "--net", "--", "sh", "-c", `ip=$1; shift\n${setUp}\nexec "$@"`, "nodekit-netns", ip]
      : [
          unshare,
          "--user",
          "--map-root-user",
          "--net",
          "--",
          "sh",
          "-c",
          `ip=$1 unshare=$2 uid=$3 gid=$4; shift 4\n${setUp}\nexec "$unshare" --user --map-user="$uid" --map-group="$gid" -- "$@"`,
          "nodekit-netns",
          ip,
          unshare,
          String(uid),
          String(gid),
        ];
  const how = uid === 0 ? "unshare --net" : "a user namespace (unshare --user --map-root-user --net)";
  const result = await (options.probe ?? spawnProbe)([...prefix, "true"]);
  if (result.code !== 0) {
    const detail = result.stderr.trim().split("\n").at(-1) ?? "";
    return { isolated: false, reason: `${how} failed${detail ? `: ${detail}` : ` with exit code ${result.code}`}` };
  }
  return { isolated: true, prefix, how };
}
