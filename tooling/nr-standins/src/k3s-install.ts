import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  apply,
  fail,
  getJson,
  parseFlags,
  patchStatus,
  readState,
  record,
  remove,
  resource,
  type World,
  world,
} from "./world.ts";

// A stand-in for the k3s installer (`sh install.sh server …`, get.k3s.io) and the k3s server
// it starts, for apps/nr's tests and the sandbox's demo shell only: no k3s can run on these
// machines. It does to the agent cluster (a real kube-apiserver with no kubelet: the test
// tier's, or the sandbox's agent cluster; through its API in this process, world.ts) what
// k3s leaves there for nr to see, and no friendlier:
//
// - The Node registers NotReady while no CNI runs: with --flannel-backend=none "the node is
//   'not ready' due to no CNI Plugin … a bit of a chicken and egg situation" (k3s-io/k3s#12583;
//   kubernetes/kubeadm#212: "NetworkPluginNotReady … cni config uninitialized"). Its Ready
//   condition is False with the kubelet's message "cni plugin not initialized" until a CNI
//   runs; here, until Calico's TigeraStatus is Available (the Calico operator stand-in,
//   calico-operator.ts, then marks the node Ready as calico-node would). With
//   flannel (the default) the node is Ready: flannel is k3s's own CNI.
// - The node's name is the --node-name (or the hostname) as the kubelet takes it:
//   Kubernetes' GetHostname(hostnameOverride) lowercases and trims it.
// - The installer writes k3s-uninstall.sh into its BIN_DIR (install.sh: UNINSTALL_K3S_SH=
//   ${BIN_DIR}/${SYSTEM_NAME}-uninstall.sh; docs.k3s.io/quick-start: "Additional utilities
//   will be installed, including … k3s-killall.sh, and k3s-uninstall.sh"). Running it removes
//   what this stand-in registered (the Node) and its running config, then itself; the real
//   one also wipes k3s's datastore, which the test tier's shared apiserver keeps.
// - Re-running the installer with other server flags on a live node changes the running
//   config (docs.k3s.io/installation/configuration: "configuration may be altered by …
//   simply re-running the installer with new options"; install.sh restarts the service when
//   the service file's hash changed): `<state>/k3s-config.json` holds the flags k3s now runs
//   with and every earlier set, and `restarts` counts the restarts.
// - An unknown server flag stops k3s from starting, as urfave/cli refuses it ("flag provided
//   but not defined"); only the flags nr passes and a few common ones are known here.

const SERVER_FLAGS = new Set([
  "flannel-backend",
  "disable-network-policy",
  "cluster-cidr",
  "service-cidr",
  "node-name",
  "node-ip",
  "disable",
  "write-kubeconfig-mode",
  "tls-san",
]);
const BOOLEAN_FLAGS = new Set(["disable-network-policy"]);

/** What the k3s service runs with now, and what it ran with before (the installer re-run with other flags). */
export interface K3sConfig {
  version: string | undefined;
  exec: string[];
  nodeName: string;
  restarts: number;
  history: string[][];
}

const NOT_READY_MESSAGE =
  "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized";

async function uninstall(w: World): Promise<void> {
  const config = readState<K3sConfig | undefined>(w, "k3s-config.json", undefined);
  record(w, { tool: "k3s-uninstall", argv: process.argv.slice(3), env: {} });
  if (config !== undefined) await remove(w, resource("v1", "nodes", config.nodeName));
  rmSync(join(w.state, "k3s-config.json"), { force: true });
  rmSync(join(w.bin, "k3s-uninstall.sh"), { force: true });
}

async function install(w: World, argv: string[]): Promise<void> {
  // install.sh's setup_env: the first argument is the command when it is not a flag.
  const command = argv[0] !== undefined && !argv[0].startsWith("-") ? argv[0] : "server";
  const rest = argv[0] === command ? argv.slice(1) : argv;
  if (command !== "server") fail(`[ERROR]  stand-in: only the server command is modelled, not ${command}`);
  const { flags, args } = parseFlags(rest, BOOLEAN_FLAGS);
  if (args.length > 0) fail(`Incorrect Usage: unexpected arguments ${args.join(" ")}`);
  for (const name of flags.keys()) {
    if (!SERVER_FLAGS.has(name)) fail(`Incorrect Usage: flag provided but not defined: -${name}`);
  }
  const one = (name: string) => flags.get(name)?.at(-1);
  const hostname = process.env.NR_STANDIN_HOSTNAME ?? "localhost";
  // GetHostname(hostnameOverride): lowercased, trimmed.
  const nodeName = (one("node-name") ?? hostname).trim().toLowerCase();

  const before = readState<K3sConfig | undefined>(w, "k3s-config.json", undefined);
  const exec = [command, ...rest];
  const changed = before === undefined || JSON.stringify(before.exec) !== JSON.stringify(exec);
  const config: K3sConfig = {
    version: process.env.INSTALL_K3S_VERSION,
    exec,
    nodeName,
    restarts: (before?.restarts ?? 0) + (before !== undefined && changed ? 1 : 0),
    history: [...(before?.history ?? []), ...(before !== undefined && changed ? [before.exec] : [])],
  };
  writeFileSync(join(w.state, "k3s-config.json"), `${JSON.stringify(config, null, 2)}\n`);
  const uninstallScript = join(w.bin, "k3s-uninstall.sh");
  writeFileSync(
    uninstallScript,
    `#!/bin/sh\nexport NR_STANDIN_KUBECONFIG='${w.kubeconfig}' NR_STANDIN_STATE='${w.state}' NR_STANDIN_BIN='${w.bin}' NR_STANDIN_PLATFORM_CLUSTER_ID='${w.platformClusterId}' NR_STANDIN_NODE_IP='${w.nodeIp}'\nexec '${process.execPath}' '${import.meta.filename}' --uninstall "$@"\n`,
  );
  chmodSync(uninstallScript, 0o755);

  const nodeIp = one("node-ip") ?? w.nodeIp;
  await apply(w, {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: nodeName,
      labels: {
        "kubernetes.io/hostname": nodeName,
        "kubernetes.io/os": "linux",
        "node-role.kubernetes.io/control-plane": "true",
        "node.kubernetes.io/instance-type": "k3s",
      },
    },
  });
  const flannel = one("flannel-backend") !== "none";
  const tigera = await getJson(w, resource("operator.tigera.io/v1", "tigerastatuses", "calico"));
  const cni =
    flannel ||
    ((tigera?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some(
      (c) => c.type === "Available" && c.status === "True",
    );
  const now = new Date().toISOString();
  await patchStatus(w, resource("v1", "nodes", nodeName), {
    addresses: [
      { type: "InternalIP", address: nodeIp },
      { type: "Hostname", address: nodeName },
    ],
    nodeInfo: { kubeletVersion: config.version ?? "", containerRuntimeVersion: "containerd://2.1.4-k3s1" },
    conditions: [
      cni
        ? {
            type: "Ready",
            status: "True",
            reason: "KubeletReady",
            message: "kubelet is posting ready status",
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          }
        : {
            type: "Ready",
            status: "False",
            reason: "KubeletNotReady",
            message: NOT_READY_MESSAGE,
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
    ],
  });
}

const w = world();
const argv = process.argv.slice(2);
// A failure is one line, as the installer's fatal() prints it: never a JavaScript stack.
try {
  if (argv[0] === "--uninstall") await uninstall(w);
  else {
    record(w, {
      tool: "k3s-install",
      argv,
      env: { INSTALL_K3S_VERSION: process.env.INSTALL_K3S_VERSION, INSTALL_K3S_EXEC: process.env.INSTALL_K3S_EXEC },
    });
    await install(w, argv);
  }
} catch (error) {
  fail(`[ERROR]  ${error instanceof Error ? error.message : String(error)}`);
}
