import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** What `sandbox` takes (`serve` is for `up` only). */
export const SANDBOX_COMMANDS = [
  "up",
  "status",
  "env",
  "kubeconfig",
  "pins",
  "flux-reconcile",
  "down",
  "help",
] as const;

/** The checkout this package lives in. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Where everything of one sandbox lives: `down` removes the whole directory. */
export interface SandboxLayout {
  root: string;
  /** testenv's state directory (its supervisor, the site cluster's data). */
  testenvDir: string;
  /** The emulator supervisor's pid, URL and start time, once it is ready. */
  emulatorInfo: string;
  emulatorLog: string;
  emulatorState: string;
  /** The tenant API servers that run, as the emulator supervisor last saw them. */
  tenantsInfo: string;
  /** One data directory per tenant API server. */
  tenantsDir: string;
  /** The NodeRings API emulator's log (run by the same supervisor), one line per request. */
  noderingsLog: string;
  /** The NodeRings API emulator's state (agents, peerings), kept across restarts. */
  noderingsState: string;
  /** The sandbox's own NodeRings API token (0600): the emulator accepts it, `env` reads it into NR_API_TOKEN. */
  noderingsToken: string;
  /** The NodeRings emulator's admin token (0600): its control routes (`/_emulator/*`) take only it. */
  noderingsAdminToken: string;
  /** `NR_HOME`: nr's state, config and companion tools, never the user's ~/.nr. */
  nrHome: string;
  /** `NR_LOCK_DIR`: the machine-wide lock of nr's runs on the sandbox's pretend VM, never /run/nr. */
  nrLockDir: string;
  /**
   * The agent's pretend VM: its cluster (a kube-apiserver + etcd of its own, in `cluster/`),
   * the kubeconfig k3s would write (`k3s.yaml`), and the stand-ins for the k3s installer and
   * liqoctl (`stand-ins/bin`, on PATH only in a shell that evaluated `sandbox env`).
   */
  agentDir: string;
  agentClusterDir: string;
  /** The agent cluster's admin kubeconfig (0600): what k3s writes to /etc/rancher/k3s/k3s.yaml. */
  agentKubeconfig: string;
  /**
   * The fleet's pretend VMs (`up --fleet N`), one directory each (`fleet/<name>/`, laid out as
   * `agentDir`, with its own NR_HOME and host root), and the Ansible inventory naming them.
   */
  fleetDir: string;
  fleetInventory: string;
  /** `NVKECTL_CONFIG`: the ready-made site, never the user's own config. */
  nvkectlConfig: string;
  /** nvkectl's token cache (XDG_CACHE_HOME of the nvkectl wrapper). */
  cacheDir: string;
  /** `KUBECACHEDIR` of the sandbox's own kubectl calls and of its wrappers': removed with the sandbox, never ~/.kube/cache. */
  kubeCacheDir: string;
  /** Holds the `nvkectl` and `nr` wrappers that the environment line puts first on PATH. */
  binDir: string;
  operatorKubeconfig: string;
  /** The environment lines `sandbox env` prints. */
  envFile: string;
  /** What `up` set up: URLs, paths, the audience. */
  sandboxInfo: string;
  /** The registry's generated password (0600). */
  registryPassword: string;
  /** `DOCKER_CONFIG`'s directory holds it: docker's config.json with the registry's credentials (0600). */
  dockerConfig: string;
  /** The release's signing key pair, the stand-in charts, helm's HOME for packaging, and what was published. */
  releaseDir: string;
  signingKey: string;
  signingPublicKey: string;
  publishedRelease: string;
  /** The release policy trusting the sandbox's key (`NVKE_SANDBOX_POLICY`). */
  policy: string;
}

export function sandboxLayout(root: string): SandboxLayout {
  const dir = resolve(root);
  return {
    root: dir,
    testenvDir: join(dir, "testenv"),
    emulatorInfo: join(dir, "emulator.json"),
    emulatorLog: join(dir, "emulator.log"),
    emulatorState: join(dir, "emulator-state.json"),
    tenantsInfo: join(dir, "tenants.json"),
    tenantsDir: join(dir, "tenants"),
    noderingsLog: join(dir, "noderings.log"),
    noderingsState: join(dir, "noderings", "state.json"),
    noderingsToken: join(dir, "noderings", "token"),
    noderingsAdminToken: join(dir, "noderings", "admin-token"),
    nrHome: join(dir, "nr"),
    nrLockDir: join(dir, "nr-lock"),
    agentDir: join(dir, "agent"),
    agentClusterDir: join(dir, "agent", "cluster"),
    agentKubeconfig: join(dir, "agent", "k3s.yaml"),
    fleetDir: join(dir, "fleet"),
    fleetInventory: join(dir, "fleet", "inventory.json"),
    nvkectlConfig: join(dir, "nvkectl", "config.yaml"),
    cacheDir: join(dir, "cache"),
    kubeCacheDir: join(dir, "cache", "kube"),
    binDir: join(dir, "bin"),
    operatorKubeconfig: join(dir, "operator.kubeconfig"),
    envFile: join(dir, "env.sh"),
    sandboxInfo: join(dir, "sandbox.json"),
    registryPassword: join(dir, "registry", "password"),
    dockerConfig: join(dir, "registry", "docker", "config.json"),
    releaseDir: join(dir, "release"),
    signingKey: join(dir, "release", "signing-key.pem"),
    signingPublicKey: join(dir, "release", "signing-key.pub.pem"),
    publishedRelease: join(dir, "release", "published.json"),
    policy: join(dir, "policy.yaml"),
  };
}

/** `$NODEKIT_SANDBOX_DIR`, else `${XDG_STATE_HOME:-~/.local/state}/nodekit/sandbox`. */
export function defaultSandboxDir(env: Record<string, string | undefined> = process.env): string {
  if (env.NODEKIT_SANDBOX_DIR) return resolve(env.NODEKIT_SANDBOX_DIR);
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(base, "nodekit", "sandbox");
}

/** The fleet's pretend VMs' names, in order: `fleet-vm-1` … `fleet-vm-<count>`. */
export function fleetNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `fleet-vm-${i + 1}`);
}

/** Where one pretend VM of the fleet keeps its cluster, kubeconfig, stand-ins, NR_HOME and host root. */
export function fleetVmLayout(layout: SandboxLayout, name: string) {
  const dir = join(layout.fleetDir, name);
  return {
    dir,
    clusterDir: join(dir, "cluster"),
    kubeconfig: join(dir, "k3s.yaml"),
    nrHome: join(dir, "nr"),
    lockDir: join(dir, "nr-lock"),
    proxmoxCredentials: join(dir, "pve.yaml"),
  };
}
