import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type RunningNodeRingsEmulator, startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { useControlPlane } from "@nodekit/testenv/vitest";
import type { PinSet } from "@nodekit/version-pins";
import { agentVm, FIXTURES, type NrHome, nrHome, pinTestbinHelm, type StandIns } from "./helpers.ts";

// Shared by nr's end-to-end files (register, day 2, upgrade): the machine a registration runs
// on. A control plane of the file's own stands for the agent cluster (the Nodes the k3s
// stand-in adds reach no other file), the NodeRings emulator for the platform, the strict
// stand-ins on PATH for the k3s installer and liqoctl, and the tigera operator stand-in.

/** The Service range the test tier's kube-apiserver serves (as k3s would serve --service-cidr). */
export const SERVICE_CIDR = "10.0.0.0/24";

/** What register and upgrade are both given: the mirrors the components come from, the waits. */
const MIRRORS_AND_WAITS = [
  "--calico-manifests",
  join(FIXTURES, "calico"),
  "--operator-chart",
  join(FIXTURES, "proxmox-operator"),
  "--poll-interval",
  "100ms",
  "--timeout",
  "60s",
];

export interface AgentMachine {
  kubeconfig: string;
  emulator: RunningNodeRingsEmulator;
  home: NrHome;
  stand: StandIns;
  /** PATH with the stand-ins first, then the test tier's kubectl and helm. */
  path: string;
  /**
   * The pin set the emulator serves: its own with this machine's helm (the version helm on
   * `path` reports). Build other pins on it:
   * `emulator.pins` stays the emulator's own, and pins built on that name the emulator's helm,
   * whose download only answers `helm version`.
   */
  pins: PinSet;
  /** The environment nr runs with here: the lock, the API token, Proxmox credentials whose secret is `secret`. */
  env(secret: string): Record<string, string>;
  /**
   * `nr cluster register` of the machine `name` (host root `root`) against `apiUrl`, with this
   * machine's kubeconfig unless `kubeconfig` names another, then `extra`.
   */
  registerArgs(target: { name: string; apiUrl: string; root: string; kubeconfig?: string }, extra?: string[]): string[];
  /** `nr cluster upgrade` of the machine registered with host root `root`, with register's mirrors and waits, then `extra`. */
  upgradeArgs(root: string, extra?: string[]): string[];
  stop(): Promise<void>;
}

/** Sets up an AgentMachine whose emulator accepts `token`; `stop` undoes it. */
export async function agentMachine(prefix: string, token: string): Promise<AgentMachine> {
  const plane = await useControlPlane({ dedicated: true });
  const kubeconfig = plane.adminKubeconfigPath;
  const emulator = await startNodeRingsEmulator({ tokens: [token], timing: { inboundMs: 300 } });
  const pins = pinTestbinHelm(emulator, plane.binDir);
  const home = await nrHome(prefix);
  const vm = await agentVm(home.path, { kubeconfig, binDir: plane.binDir });
  const { stand, path } = vm;
  return {
    kubeconfig,
    emulator,
    home,
    stand,
    path,
    pins,
    env: (secret) => ({
      NR_LOCK_DIR: home.lockDir,
      NR_API_TOKEN: token,
      NR_PROXMOX_URL: "https://pve.example:8006/api2/json",
      NR_PROXMOX_TOKEN_ID: "root@pam!nr",
      NR_PROXMOX_TOKEN_SECRET: secret,
      PATH: path,
    }),
    registerArgs: ({ name, apiUrl, root, kubeconfig: given }, extra = []) => [
      "cluster",
      "register",
      "--name",
      name,
      "--api-url",
      apiUrl,
      "--kubeconfig",
      given ?? kubeconfig,
      "--host-root",
      root,
      ...MIRRORS_AND_WAITS,
      "--offload-namespace",
      "tenant-vms",
      // liqoctl install checks that every Service's ClusterIP is in this range.
      "--service-cidr",
      SERVICE_CIDR,
      ...extra,
    ],
    upgradeArgs: (root, extra = []) => ["cluster", "upgrade", "--host-root", root, ...MIRRORS_AND_WAITS, ...extra],
    stop: async () => {
      vm.stop();
      await emulator.stop();
      await home.cleanup();
    },
  };
}

/**
 * A proxy on loopback in front of `target` (the platform as nr reaches it): each request is
 * passed to `seen` with its body before it goes on; while `down()` says so, connections are reset.
 */
export async function platformProxy(
  target: string,
  seen: (req: IncomingMessage, body: Buffer) => void,
  down: () => boolean = () => false,
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (down()) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      seen(req, body);
      const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
