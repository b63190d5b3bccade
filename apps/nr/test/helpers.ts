import { execFile } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { type CliResult, type RunCliOptions, repoRoot, runCli, tempDir } from "@nodekit/test-utils";

// Shared by apps/nr's tests: the CLI built and run as a subprocess, with HOME and NR_HOME
// in a temporary directory of the test's own, and recording stand-ins for the programs
// that cannot run on these machines (the k3s installer, liqoctl).

const execFileAsync = promisify(execFile);

export const FIXTURES = join(repoRoot, "apps/nr/test/fixtures");

export interface NrHome {
  path: string;
  /** ~/.nr */
  nrHome: string;
  env: Record<string, string>;
  nr(args: string[], options?: Omit<RunCliOptions, "cwd">): Promise<CliResult>;
  cleanup(): Promise<void>;
}

export async function nrHome(prefix = "nr-test-"): Promise<NrHome> {
  const dir = await tempDir(prefix);
  const nr = join(dir.path, ".nr");
  const env = {
    HOME: dir.path,
    NR_HOME: nr,
    XDG_CONFIG_HOME: join(dir.path, "config"),
    XDG_CACHE_HOME: join(dir.path, "cache"),
  };
  return {
    path: dir.path,
    nrHome: nr,
    env,
    nr: (args, options = {}) => runCli("nr", args, { ...options, cwd: dir.path, env: { ...env, ...options.env } }),
    cleanup: dir.cleanup,
  };
}

/**
 * A directory laid out like a provider VM's, for the prechecks (`--host-root`): a
 * supported distribution and kernel, 8 GiB of memory, nothing on the ports it checks.
 */
export async function hostRoot(
  dir: string,
  overrides: {
    osRelease?: string;
    kernel?: string;
    memKb?: number;
    tcp?: string;
    arch?: string;
    hostname?: string;
  } = {},
): Promise<string> {
  const root = join(dir, "host");
  const files: Record<string, string> = {
    "etc/os-release":
      overrides.osRelease ?? 'NAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\nPRETTY_NAME="Ubuntu 24.04.3 LTS"\n',
    "proc/sys/kernel/osrelease": `${overrides.kernel ?? "6.8.0-85-generic"}\n`,
    "proc/sys/kernel/arch": `${overrides.arch ?? "x86_64"}\n`,
    "proc/sys/kernel/hostname": `${overrides.hostname ?? "pve-node-1"}\n`,
    "proc/meminfo": `MemTotal:       ${overrides.memKb ?? 8 * 1024 * 1024} kB\nMemFree:         1000 kB\n`,
    "proc/net/tcp": `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n${overrides.tcp ?? ""}`,
    "proc/net/udp":
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n",
    "var/lib/.keep": "",
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), content);
  }
  return root;
}

interface Recorded {
  tool: "k3s-install" | "liqoctl";
  argv: string[];
  env: Record<string, string | undefined>;
  /** For liqoctl peer: the remote kubeconfig as it was when liqoctl ran (mode, whether it held a token). */
  remoteKubeconfig?: { mode: number; hasToken: boolean };
}

export interface StandIns {
  bin: string;
  records(): Promise<Recorded[]>;
}

/**
 * Recording stand-ins on PATH for the k3s installer and liqoctl (tests only). Each records
 * its argv and environment, then does to the cluster what the real one would leave there
 * for nr to see: the installer registers the Node and reports it Ready (as k3s's kubelet
 * would); liqoctl installs Liqo's CRDs and namespace, creates the ForeignCluster toward the
 * platform on `peer`, and a NamespaceOffloading on `offload namespace`.
 */
export async function standIns(
  dir: string,
  options: { kubeconfig: string; platformClusterId: string },
): Promise<StandIns> {
  const bin = join(dir, "stand-ins");
  await mkdir(bin, { recursive: true });
  const recordFile = join(dir, "stand-ins.jsonl");
  await writeFile(recordFile, "");
  const recorder = join(bin, "recorder.mjs");
  await writeFile(
    recorder,
    `import { appendFileSync, readFileSync, statSync } from "node:fs";
import { execFileSync } from "node:child_process";
const [tool, ...argv] = process.argv.slice(2);
const kubeconfig = ${JSON.stringify(options.kubeconfig)};
const kubectl = (args, input) => execFileSync("kubectl", ["--kubeconfig", kubeconfig, ...args], { input, encoding: "utf8" });
const flag = (name) => { const i = argv.indexOf(name); return i === -1 ? undefined : argv[i + 1]; };
const record = { tool, argv, env: { INSTALL_K3S_VERSION: process.env.INSTALL_K3S_VERSION, INSTALL_K3S_EXEC: process.env.INSTALL_K3S_EXEC } };
if (tool === "liqoctl" && argv[0] === "version") { console.log("Client version: v1.0.1"); process.exit(0); }
if (tool === "liqoctl" && argv[0] === "peer") {
  const file = flag("--remote-kubeconfig");
  record.remoteKubeconfig = { mode: statSync(file).mode & 0o777, hasToken: /"token": "\\S+"/.test(readFileSync(file, "utf8")) };
}
appendFileSync(${JSON.stringify(recordFile)}, JSON.stringify(record) + "\\n");
const crd = (group, kind, plural, scope) => ({ apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
  metadata: { name: plural + "." + group }, spec: { group, scope, names: { kind, plural, singular: kind.toLowerCase(), listKind: kind + "List" },
  versions: [{ name: "v1beta1", served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }] } });
const apply = (...items) => kubectl(["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items }));
if (tool === "k3s-install") {
  const node = (argv.find((a) => a.startsWith("--node-name=")) ?? "").slice("--node-name=".length);
  apply({ apiVersion: "v1", kind: "Node", metadata: { name: node } });
  kubectl(["patch", "node/" + node, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status (stand-in)", lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }] } })]);
} else if (argv[0] === "install") {
  apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "liqo" } },
    crd("core.liqo.io", "ForeignCluster", "foreignclusters", "Cluster"),
    crd("offloading.liqo.io", "NamespaceOffloading", "namespaceoffloadings", "Namespaced"));
  kubectl(["wait", "--for=condition=Established", "crd/foreignclusters.core.liqo.io", "crd/namespaceoffloadings.offloading.liqo.io", "--timeout=60s"]);
} else if (argv[0] === "peer") {
  const id = ${JSON.stringify(options.platformClusterId)};
  apply({ apiVersion: "core.liqo.io/v1beta1", kind: "ForeignCluster", metadata: { name: id }, spec: { clusterID: id } });
  kubectl(["patch", "foreignclusters.core.liqo.io/" + id, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { role: "Provider" } })]);
} else if (argv[0] === "offload") {
  apply({ apiVersion: "offloading.liqo.io/v1beta1", kind: "NamespaceOffloading", metadata: { name: "offloading", namespace: argv[2] },
    spec: { podOffloadingStrategy: flag("--pod-offloading-strategy"), namespaceMappingStrategy: flag("--namespace-mapping-strategy") } });
}
`,
  );
  for (const [name, tool] of [
    ["k3s-install.sh", "k3s-install"],
    ["liqoctl", "liqoctl"],
  ] as const) {
    const path = join(bin, name);
    await writeFile(
      path,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(recorder)} ${tool} "$@"\n`,
    );
    await chmod(path, 0o755);
  }
  return {
    bin,
    async records() {
      const text = await readFile(recordFile, "utf8");
      return text
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line) as Recorded);
    },
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
 * What the tigera operator would do once Calico runs (nothing runs pods here): when the
 * Installation `default` exists, create TigeraStatus `calico` and report it Available.
 * Stops when the returned function is called.
 */
export function tigeraStatusSetter(kubeconfig: string): () => void {
  let stopped = false;
  let done = false;
  const tick = async () => {
    if (stopped || done) return;
    try {
      await kubectl(kubeconfig, ["get", "installations.operator.tigera.io/default", "-o", "name"]);
    } catch {
      return;
    }
    try {
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
      await kubectl(kubeconfig, [
        "patch",
        "tigerastatus/calico",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: {
            conditions: [
              {
                type: "Available",
                status: "True",
                reason: "AllObjectsAvailable",
                message: "All objects are available (stand-in)",
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        }),
      ]);
      done = true;
    } catch {}
  };
  const timer = setInterval(() => void tick(), 300);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
