import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { chmod, copyFile, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Timing } from "@nodekit/nvke-emulator";
import {
  commandOf,
  isAlive,
  killLeftovers,
  NotReadyError,
  runProcess,
  startDetached,
  terminate,
  untilStopped,
} from "@nodekit/testenv/supervisor";
import { answers } from "./answers.ts";
import { SandboxError } from "./errors.ts";
import { fleetNames, fleetVmLayout, repoRoot, type SandboxLayout, sandboxLayout } from "./layout.ts";
import {
  ensureNextRelease,
  ensureRegistryPassword,
  ensureRelease,
  ensureSigningKey,
  providerRepository,
  REGISTRY_USER,
  STAND_IN_NOTE,
  writeDockerConfig,
  writePrivate,
} from "./release.ts";
import {
  AVAILABLE_STATUS,
  authObjects,
  CAPD_CONTROLLER,
  capdObjects,
  grantNamespaces,
  grantObjects,
  INSTALLED_PROVIDER_GRANTS,
  OPERATOR_GRANTS,
  OPERATOR_USER,
  SANDBOX_AUDIENCE,
  SANDBOX_NICO_API_KEY,
  SANDBOX_SITE,
  siteNodeObjects,
} from "./site-objects.ts";

const testenvCli = join(repoRoot, "tooling/testenv/src/cli.ts");
const sandboxCli = fileURLToPath(new URL("./cli.ts", import.meta.url));
const nvkectlBin = join(repoRoot, "apps/nvkectl/bin/run.js");
const nrBin = join(repoRoot, "apps/nr/bin/run.js");

/** What `up` set up, as `sandbox.json` keeps it and `up` prints it. */
export interface SandboxInfo {
  dir: string;
  site: { server: string; adminKubeconfig: string };
  controller: { url: string; audience: string };
  operator: { user: string; kubeconfig: string };
  nvkectl: { config: string; site: string; binDir: string; envFile: string };
  /**
   * The NodeRings API emulator: its URL, the file holding the sandbox's own API token, and the
   * one holding the admin token its control routes (`/_emulator/*`) take (neither is printed).
   */
  noderings: { url: string; tokenFile: string; adminTokenFile: string };
  /** nr's NR_HOME (state, config, companion tools): the user's ~/.nr is never touched. */
  nr: { home: string };
  /**
   * The agent's pretend VM for a real `nr cluster register`: its cluster's kubeconfig (what k3s
   * writes), the stand-ins for the k3s installer and liqoctl (on PATH only through `sandbox
   * env`), and the trimmed Calico manifests and operator chart nr is pointed at (nothing is
   * downloaded here).
   */
  agent: { kubeconfig: string; standIns: string; calicoManifests: string; operatorChart: string };
  /**
   * The fleet's pretend VMs (`up --fleet N`), each as the agent's (a cluster, stand-ins, an
   * NR_HOME and a host root of its own), and the Ansible inventory naming them (absent: no fleet).
   */
  fleet?: { inventory: string; hosts: string[] };
  /** The distribution registry on loopback (Basic auth; the password is in the docker config, never printed). */
  registry: { url: string; host: string; user: string; dockerConfig: string };
  /** The signed release published into it, the policy trusting its key, the provider repository (cert-manager). */
  release: {
    tagReference: string;
    pinnedReference: string;
    policy: string;
    providers: string;
    note: string;
    /** The second release, one chart and one provider newer: what `nvkectl upgrade` moves to. */
    next: { tagReference: string; pinnedReference: string };
  };
}

export interface SandboxOptions {
  /** The sandbox's directory: everything it runs and writes is in there. */
  dir: string;
  /** Progress for people (stderr in the CLI). */
  log: (line: string) => void;
  /** Environment of the processes it starts (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface UpOptions extends SandboxOptions {
  /** Holds kube-apiserver and etcd; default: tooling/k8s-testbin/ensure.sh builds or finds them. */
  binDir?: string;
  /** The emulated controller's speed (default: the emulator's, 5 s to Ready). */
  timing?: Partial<Timing>;
  /** How many pretend VMs of a fleet to run beside the agent's, for Ansible (default none). */
  fleet?: number;
}

interface EmulatorRecord {
  pid: number;
  /** The NVKE controller emulator. */
  url: string;
  /** The NodeRings API emulator, served by the same supervisor (absent: a sandbox from before it). */
  noderings?: { url: string };
  /** The site cluster it authenticates against: a restarted site needs a restarted emulator. */
  siteServer: string;
  startedAt: string;
  /** The distribution registry the same supervisor runs (absent: a sandbox from before it). */
  registry?: { url: string; host: string; storageDir: string };
  /** The stand-in for kube-controller-manager the same supervisor runs (absent: a sandbox from before it). */
  controllerStandIn?: { retryMs: number };
  /** The agent cluster the same supervisor runs, with its controller and Calico stand-ins (absent: a sandbox from before it). */
  agent?: { server: string; pids: readonly number[] };
  /** The fleet's pretend VMs' clusters the same supervisor runs (`up --fleet N`; absent: none). */
  fleet?: Array<{ name: string; server: string; pids: readonly number[] }>;
}

export interface TenantRecord {
  cluster: string;
  server: string;
  pids: readonly number[];
}

interface TestenvStatus {
  running: boolean;
  pid?: number;
  info?: { server: string; adminKubeconfigPath: string; binDir: string };
  pids?: { etcd: number; kubeApiserver: number };
  startedAt?: string;
}

const FIRST_BUILD =
  "the first build of the Kubernetes binaries (kube-apiserver, etcd, helm, clusterctl from Go modules) takes about 6 minutes on 2 cores; it is cached in ~/.cache/nodekit/k8s-testbin, and later starts take under a second";

/**
 * The Kubernetes binaries (`binaries("kubernetes")`: the given directory, the runner's, or
 * tooling/k8s-testbin/ensure.sh's), saying how long a cold build takes and how far it is.
 */
async function ensureBinaries(options: UpOptions): Promise<string> {
  // Loaded here: status, env and down never need testenv's start-up code (the spawner, certificates, …).
  const { binaries } = await import("@nodekit/testenv");
  const env = options.env === undefined ? {} : { env: options.env };
  if (options.binDir !== undefined) return binaries("kubernetes", { binDir: options.binDir });
  const started = Date.now();
  let announced = false;
  const announce = () => {
    if (announced) return;
    announced = true;
    options.log(FIRST_BUILD);
  };
  const minutes = () => {
    const s = Math.round((Date.now() - started) / 1000);
    return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  };
  // ensure.sh is silent when the cache is warm (0.05 s), and while it waits for another build's lock.
  const early = setTimeout(announce, 2_000);
  const ticker = setInterval(() => {
    announce();
    options.log(`still building the Kubernetes binaries: ${minutes()} so far, about 6 min in all on 2 cores`);
  }, 30_000);
  try {
    return await binaries("kubernetes", {
      ...env,
      log: (line) => {
        announce();
        options.log(line);
      },
    });
  } finally {
    clearTimeout(early);
    clearInterval(ticker);
    if (announced) options.log(`the Kubernetes binaries are ready (${minutes()})`);
  }
}

/** The registry binaries (`binaries("registry")`; a cold build is about 4 min on 2 cores, then cached). */
async function ensureRegistryBinaries(options: UpOptions): Promise<string> {
  const { binaries } = await import("@nodekit/testenv");
  const early = setTimeout(
    () =>
      options.log(
        "building the distribution registry from Go modules (tooling/registry-testbin/ensure.sh): about 4 minutes on 2 cores, once; it is cached in ~/.cache/nodekit/registry-testbin",
      ),
    2_000,
  );
  try {
    return await binaries("registry", options.env === undefined ? {} : { env: options.env });
  } finally {
    clearTimeout(early);
  }
}

async function testenv(layout: SandboxLayout, options: SandboxOptions, args: string[]) {
  const result = await runProcess(process.execPath, [testenvCli, ...args], {
    env: { ...(options.env ?? process.env), NODEKIT_TESTENV_STATE_DIR: layout.testenvDir },
    onStderrLine: (line) => options.log(line),
  });
  return result;
}

/**
 * The site cluster's supervisor, from testenv's state.json (supervisor PID, server, paths —
 * docs/testing.md): what `testenv status -o json` reads, without starting a process for it.
 */
async function testenvStatus(layout: SandboxLayout, _options: SandboxOptions): Promise<TestenvStatus> {
  const state = await readJson<Omit<TestenvStatus, "running">>(join(layout.testenvDir, "state.json"));
  if (state?.pid === undefined || !isAlive(state.pid)) return { running: false };
  return { running: true, ...state };
}

async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const result = await runProcess("kubectl", ["--kubeconfig", kubeconfig, ...args], {
    ...(input === undefined ? {} : { input }),
    timeoutMs: 60_000,
  });
  if (result.exitCode !== 0) {
    throw new SandboxError(`kubectl ${args.slice(0, 2).join(" ")} on the site cluster failed`, {
      why: result.stderr.trim() || `exit code ${result.exitCode}`,
      next: ["kubectl must be on PATH (the machine's own is used)"],
    });
  }
  return result.stdout;
}

const applyObjects = (kubeconfig: string, objects: object[]) =>
  kubectl(kubeconfig, ["apply", "-f", "-"], JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));

/** Auth on, the operator's RBAC, the CAPD provider and the site's node, on the site cluster. Idempotent. */
async function setUpSite(admin: string): Promise<void> {
  const subject = { user: OPERATOR_USER };
  // One List, applied in order: the namespaces come before the Roles in them.
  await applyObjects(admin, [
    ...authObjects(SANDBOX_AUDIENCE),
    ...grantNamespaces(OPERATOR_GRANTS),
    ...capdObjects(),
    ...siteNodeObjects(),
    ...grantObjects(OPERATOR_GRANTS, subject),
    // A ClusterRole may name a resource the cluster does not serve yet (only `kubectl create`
    // checks): the operator can list NicoIdentities once an install has put the provider there.
    ...grantObjects(INSTALLED_PROVIDER_GRANTS, subject),
  ]);
  await kubectl(admin, [
    "patch",
    "deployment",
    CAPD_CONTROLLER.name,
    "-n",
    CAPD_CONTROLLER.namespace,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify(AVAILABLE_STATUS),
  ]);
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

const writeJson = (path: string, value: unknown) => writePrivate(path, `${JSON.stringify(value, null, 2)}\n`);

const ok = (status: number) => status >= 200 && status < 300;

/** An emulator's `/healthz` says ok. */
const healthy = (url: string) => answers(`${url}/healthz`, ok);

/** The registry answers its API root (401 without credentials: Basic auth is on). */
const registryAnswers = (url: string) => answers(`${url}/v2/`, (status) => status === 401 || ok(status));

/** The emulator supervisor, if it is alive, and which of its two emulators answer. */
async function emulatorHealth(
  layout: SandboxLayout,
): Promise<{ record: EmulatorRecord; nvke: boolean; noderings: boolean; registry: boolean } | undefined> {
  const record = await readJson<EmulatorRecord>(layout.emulatorInfo);
  if (record === undefined || !isAlive(record.pid)) return undefined;
  const [nvke, noderings, registry] = await Promise.all([
    healthy(record.url),
    record.noderings === undefined ? false : healthy(record.noderings.url),
    record.registry === undefined ? false : registryAnswers(record.registry.url),
  ]);
  return { record, nvke, noderings, registry };
}

/** The running supervisor, if it is alive and its emulators, its registry and its controller stand-in answer. */
async function runningEmulator(layout: SandboxLayout): Promise<EmulatorRecord | undefined> {
  const health = await emulatorHealth(layout);
  return health?.nvke && health.noderings && health.registry && health.record.controllerStandIn && health.record.agent
    ? health.record
    : undefined;
}

/**
 * The sandbox's own NodeRings tokens, made once per sandbox (0600): the API token (the
 * emulator accepts only it) and the admin token its control routes take.
 */
async function ensureNodeRingsTokens(layout: SandboxLayout): Promise<void> {
  for (const [path, prefix] of [
    [layout.noderingsToken, "nr-sandbox"],
    [layout.noderingsAdminToken, "nr-sandbox-admin"],
  ] as const) {
    try {
      if ((await readFile(path, "utf8")).trim() !== "") continue;
    } catch {
      // made below
    }
    await writePrivate(path, `${prefix}-${randomBytes(24).toString("base64url")}\n`);
  }
}

async function stopEmulator(layout: SandboxLayout, log: (line: string) => void): Promise<boolean> {
  const record = await readJson<EmulatorRecord>(layout.emulatorInfo);
  const stopped =
    record !== undefined &&
    isAlive(record.pid) &&
    commandOf(record.pid).includes("node") &&
    (await terminate(record.pid, { graceMs: 30_000, what: "the NVKE controller emulator", log }));
  // Tenant API servers of an emulator that was killed outright: testenv's watchdog removes
  // them within seconds; this makes sure, and does not wait for it.
  let tenants: string[] = [];
  try {
    tenants = await readdir(layout.tenantsDir);
  } catch {
    // none
  }
  for (const tenant of tenants) {
    await killLeftovers(join(layout.tenantsDir, tenant, "pids"), log, ` of tenant ${tenant}`);
  }
  await killLeftovers(join(layout.agentClusterDir, "pids"), log, " of the agent cluster");
  let fleet: string[] = [];
  try {
    fleet = await readdir(layout.fleetDir);
  } catch {
    // none
  }
  for (const name of fleet) {
    await killLeftovers(join(fleetVmLayout(layout, name).clusterDir, "pids"), log, ` of the fleet's ${name}`);
  }
  await rm(layout.emulatorInfo, { force: true });
  await rm(layout.tenantsInfo, { force: true });
  return stopped;
}

async function startEmulatorSupervisor(
  layout: SandboxLayout,
  options: UpOptions,
  site: { admin: string; server: string; pid: number; binDir: string; registryBinDir: string },
): Promise<EmulatorRecord> {
  const timing = options.timing ?? {};
  const args = [
    "--conditions=source",
    sandboxCli,
    "serve",
    "--dir",
    layout.root,
    "--kubeconfig",
    site.admin,
    "--site-server",
    site.server,
    "--site-pid",
    String(site.pid),
    "--bin-dir",
    site.binDir,
    "--registry-bin-dir",
    site.registryBinDir,
    ...(timing.provisionMs === undefined ? [] : ["--provision-ms", String(timing.provisionMs)]),
    ...(timing.deleteMs === undefined ? [] : ["--delete-ms", String(timing.deleteMs)]),
    ...(timing.nodeMs === undefined ? [] : ["--node-ms", String(timing.nodeMs)]),
    ...(options.fleet ? ["--fleet", String(options.fleet)] : []),
  ];
  try {
    return await startDetached({
      command: process.execPath,
      args,
      logFile: layout.emulatorLog,
      env: options.env ?? process.env,
      ready: async (pid) => {
        const record = await readJson<EmulatorRecord>(layout.emulatorInfo);
        return record?.pid === pid ? record : undefined;
      },
      // Before it says ready the supervisor starts the registry, the stand-ins, the agent cluster
      // (a kube-apiserver and etcd of its own) and both emulators: seconds on a quiet machine,
      // over a minute on a loaded one (the test tier runs two files at once).
      timeoutMs: 180_000,
    });
  } catch (error) {
    if (!(error instanceof NotReadyError)) throw error;
    throw new SandboxError(
      "the emulators (NVKE controller, NodeRings API), the registry or the controller stand-in did not start",
      {
        why: error.message,
        next: ["take the sandbox down and up again: ./run sandbox down && ./run sandbox up"],
      },
    );
  }
}

const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/** The environment lines that point a shell at the sandbox (`sandbox env`). */
export function environmentLines(info: SandboxInfo): string[] {
  return [
    `export NVKECTL_CONFIG=${shellQuote(info.nvkectl.config)}`,
    `export PATH=${shellQuote(info.nvkectl.binDir)}:"$PATH"`,
    `export NVKE_SANDBOX_DIR=${shellQuote(info.dir)}`,
    `export NVKE_SANDBOX_URL=${shellQuote(info.controller.url)}`,
    `export NVKE_SANDBOX_ADMIN_KUBECONFIG=${shellQuote(info.site.adminKubeconfig)}`,
    `export NVKE_SANDBOX_OPERATOR_KUBECONFIG=${shellQuote(info.operator.kubeconfig)}`,
    `export NR_API_URL=${shellQuote(info.noderings.url)}`,
    // Read when the line is evaluated: the token itself is never printed.
    `export NR_API_TOKEN="$(cat ${shellQuote(info.noderings.tokenFile)})"`,
    `export NR_HOME=${shellQuote(info.nr.home)}`,
    // The agent's pretend VM: the stand-ins for the k3s installer and liqoctl are on PATH in
    // this shell only (never a user's normal one), first, so a real liqoctl elsewhere on PATH
    // never acts on the sandbox's agent cluster.
    `export PATH=${shellQuote(info.agent.standIns)}:"$PATH"`,
    `export NR_SANDBOX_AGENT_KUBECONFIG=${shellQuote(info.agent.kubeconfig)}`,
    `export NR_SANDBOX_CALICO_MANIFESTS=${shellQuote(info.agent.calicoManifests)}`,
    `export NR_SANDBOX_OPERATOR_CHART=${shellQuote(info.agent.operatorChart)}`,
    ...(info.fleet === undefined ? [] : [`export NR_SANDBOX_FLEET_INVENTORY=${shellQuote(info.fleet.inventory)}`]),
    // The registry's credentials as an operator gives them: docker's config (helm reads it too), never argv.
    `export DOCKER_CONFIG=${shellQuote(dirname(info.registry.dockerConfig))}`,
    `export HELM_REGISTRY_CONFIG=${shellQuote(info.registry.dockerConfig)}`,
    `export NVKE_SANDBOX_REGISTRY=${shellQuote(info.registry.host)}`,
    `export NVKE_SANDBOX_RELEASE=${shellQuote(info.release.tagReference)}`,
    `export NVKE_SANDBOX_RELEASE_NEXT=${shellQuote(info.release.next.tagReference)}`,
    `export NVKE_SANDBOX_POLICY=${shellQuote(info.release.policy)}`,
    `export NVKE_SANDBOX_PROVIDERS=${shellQuote(info.release.providers)}`,
  ];
}

async function writeWrapper(layout: SandboxLayout, name: string, lines: string[]): Promise<void> {
  await mkdir(layout.binDir, { recursive: true, mode: 0o700 });
  const path = join(layout.binDir, name);
  await writeFile(path, ["#!/bin/sh", ...lines, ""].join("\n"));
  await chmod(path, 0o755);
}

/** `bin/nvkectl` and `bin/nr`: the checkout's builds, keeping what they write in the sandbox. */
async function writeWrappers(layout: SandboxLayout): Promise<void> {
  const node = shellQuote(process.execPath);
  await writeWrapper(layout, "nvkectl", [
    `# nvkectl from ${repoRoot}, with this sandbox's own token cache and kubectl cache (removed by \`sandbox down\`).`,
    `XDG_CACHE_HOME=${shellQuote(layout.cacheDir)} KUBECACHEDIR=${shellQuote(layout.kubeCacheDir)} exec ${node} ${shellQuote(nvkectlBin)} "$@"`,
  ]);
  await writeWrapper(layout, "nr", [
    `# nr from ${repoRoot}; NR_HOME and NR_LOCK_DIR are this sandbox's unless set (removed by \`sandbox down\`), so ~/.nr and /run/nr are not touched; its kubectl caches in the sandbox too.`,
    `NR_HOME="\${NR_HOME:-${layout.nrHome}}" NR_LOCK_DIR="\${NR_LOCK_DIR:-${layout.nrLockDir}}" KUBECACHEDIR=${shellQuote(layout.kubeCacheDir)} exec ${node} ${shellQuote(nrBin)} "$@"`,
  ]);
}

/**
 * The stand-ins for the k3s installer and liqoctl on the agent's pretend VM
 * (`agent/stand-ins/bin`, on PATH only in a shell that evaluated `sandbox env`), acting on the
 * agent cluster as the real programs would, and the Calico manifests and operator chart nr is
 * pointed at instead of downloads (@nodekit/nr-standins, as apps/nr's tests use them).
 */
async function writeAgentStandIns(layout: SandboxLayout): Promise<SandboxInfo["agent"]> {
  const { CALICO_MANIFESTS, OPERATOR_CHART, standIns } = await import("@nodekit/nr-standins");
  const { DEFAULT_PLATFORM } = await import("@nodekit/noderings-emulator");
  const written = await standIns(layout.agentDir, {
    kubeconfig: layout.agentKubeconfig,
    platformClusterId: DEFAULT_PLATFORM.platformClusterId,
  });
  return {
    kubeconfig: layout.agentKubeconfig,
    standIns: written.bin,
    calicoManifests: CALICO_MANIFESTS,
    operatorChart: OPERATOR_CHART,
  };
}

/** The Proxmox secret the fleet's pretend VMs are given: not a secret, but a canary the demo checks no output shows. */
const FLEET_PROXMOX_TOKEN_SECRET = "sandbox-fleet-proxmox-not-a-secret";

/**
 * The fleet's pretend VMs (`up --fleet N`), each written as the agent's is: the stand-ins for
 * the k3s installer and liqoctl acting on its own cluster (which the supervisor runs), a host
 * root for the prechecks, an NR_HOME, an nr lock and a Proxmox credentials file (0600) of its
 * own. And the Ansible inventory naming them (`fleet/inventory.json`): each host local
 * (`ansible_connection: local`, its Ansible temp in its own directory), with the variables the playbook of docs/fleets.md's sandbox
 * section passes to nodekit.nr.nr_register.
 */
async function writeFleet(
  layout: SandboxLayout,
  emulator: EmulatorRecord,
  agent: SandboxInfo["agent"],
): Promise<NonNullable<SandboxInfo["fleet"]>> {
  const { hostRoot, standIns } = await import("@nodekit/nr-standins");
  const { DEFAULT_PLATFORM } = await import("@nodekit/noderings-emulator");
  const hosts: Record<string, Record<string, unknown>> = {};
  for (const [i, { name }] of (emulator.fleet ?? []).entries()) {
    const vm = fleetVmLayout(layout, name);
    const address = `10.20.${i + 1}.11`;
    const stand = await standIns(vm.dir, {
      kubeconfig: vm.kubeconfig,
      platformClusterId: DEFAULT_PLATFORM.platformClusterId,
      nodeIp: address,
    });
    const root = await hostRoot(vm.dir, { hostname: name, address });
    await mkdir(vm.nrHome, { recursive: true, mode: 0o700 });
    await writePrivate(
      vm.proxmoxCredentials,
      `url: https://${name}.sandbox.test:8006/api2/json\ntokenId: root@pam!nr\ntokenSecret: ${FLEET_PROXMOX_TOKEN_SECRET}\n`,
    );
    hosts[name] = {
      nr_home: vm.nrHome,
      nr_api_url: emulator.noderings?.url ?? "",
      nr_api_token_file: layout.noderingsToken,
      nr_proxmox_credentials: vm.proxmoxCredentials,
      nr_kubeconfig: vm.kubeconfig,
      nr_host_root: root,
      nr_api_server_url: `https://${name}.sandbox.test:6443`,
      nr_calico_manifests: agent.calicoManifests,
      nr_operator_chart: agent.operatorChart,
      // Where Ansible writes each task's module: the VM's own directory. Its default,
      // ~/.ansible/tmp, is the home of the user in the passwd file (not $HOME), which would
      // leave a directory in the operator's own home after `./run sandbox down`.
      ansible_remote_tmp: join(vm.dir, "ansible-tmp"),
      // What sets this VM apart on one machine: its nr lock, its cache, and its programs
      // (the stand-ins first, then the sandbox's nr and helm, then this shell's kubectl).
      nr_env: {
        NR_LOCK_DIR: vm.lockDir,
        XDG_CACHE_HOME: join(vm.dir, "cache"),
        PATH: `${stand.bin}:${layout.binDir}:${process.env.PATH ?? ""}`,
      },
    };
  }
  const inventory = {
    fleet: {
      vars: { ansible_connection: "local", ansible_python_interpreter: "{{ ansible_playbook_python }}" },
      hosts,
    },
  };
  await writePrivate(layout.fleetInventory, `${JSON.stringify(inventory, null, 2)}\n`);
  return { inventory: layout.fleetInventory, hosts: Object.keys(hosts) };
}

/** The tools an install runs besides kubectl (the machine's): helm and clusterctl from tooling/k8s-testbin. */
const LINKED_TOOLS = ["helm", "clusterctl"] as const;

/** `bin/helm` and `bin/clusterctl`: links to the testbin's builds, at the versions the install pins. */
async function linkKubeTools(layout: SandboxLayout, binDir: string): Promise<void> {
  for (const tool of LINKED_TOOLS) {
    const link = join(layout.binDir, tool);
    await rm(link, { force: true });
    await symlink(join(binDir, tool), link);
  }
}

/**
 * Brings the sandbox up, or finds it up: the site cluster (testenv's supervisor), auth on
 * with the operator's RBAC, the NVKE controller emulator (tenant API servers on) and the
 * nvkectl site. Everything listens on 127.0.0.1 only. Idempotent.
 */
export async function up(options: UpOptions): Promise<SandboxInfo> {
  const layout = sandboxLayout(options.dir);
  const { log } = options;
  await mkdir(layout.root, { recursive: true, mode: 0o700 });
  const env = options.env ?? process.env;
  const [binDir, registryBinDir] = await Promise.all([ensureBinaries(options), ensureRegistryBinaries(options)]);
  // Built once into the nodekit cache; meanwhile the site cluster starts.
  const providersReady = providerRepository(env, log);
  providersReady.catch(() => {});

  log("site cluster: kube-apiserver + etcd (testenv)");
  const started = await testenv(layout, options, ["up", "--bin-dir", binDir]);
  const admin = started.stdout.trim().split("\n").at(-1)?.trim() ?? "";
  const site = await testenvStatus(layout, options);
  if (started.exitCode !== 0 || admin === "" || !site.running || site.info === undefined || site.pid === undefined) {
    throw new SandboxError("the site cluster (kube-apiserver + etcd) did not start", {
      why: started.stderr.trim().split("\n").slice(-15).join("\n"),
      next: [`look at ${join(layout.testenvDir, "supervisor.log")}`, "then: ./run sandbox down && ./run sandbox up"],
    });
  }

  log(
    `site objects: auth on (audience "${SANDBOX_AUDIENCE}"), ServiceAccount nke-clients/nke-client, user "${OPERATOR_USER}"'s RBAC, the CAPD provider`,
  );
  const siteInfo = site.info;
  const sitePid = site.pid;
  // The operator's certificate does not depend on the site objects: issue it meanwhile.
  const [, emulator] = await Promise.all([
    issueOperatorKubeconfig(layout, options),
    (async () => {
      await setUpSite(admin);
      // The emulator starts once auth is on, so it never serves from an "auth off" read.
      let running = await runningEmulator(layout);
      if (running !== undefined && running.siteServer !== siteInfo.server) {
        log("the site cluster was restarted: restarting the NVKE controller emulator against it");
        await stopEmulator(layout, log);
        running = undefined;
      }
      if (running !== undefined && (running.fleet?.length ?? 0) !== (options.fleet ?? 0)) {
        log(`a fleet of ${options.fleet ?? 0} pretend VMs is asked for: restarting the supervisor that runs them`);
        await stopEmulator(layout, log);
        running = undefined;
      }
      if (running !== undefined) {
        log(`NVKE controller: already running at ${running.url} (pid ${running.pid})`);
        log(`NodeRings API: already running at ${running.noderings?.url} (pid ${running.pid})`);
        return running;
      }
      await stopEmulator(layout, log);
      log("NVKE controller: the emulator, auth on, each Ready tenant cluster with an API server of its own");
      log("NodeRings API: the emulator, with a token of this sandbox's own");
      log(
        `registry: the distribution registry, Basic auth (user "${REGISTRY_USER}", a password of this sandbox's own)`,
      );
      log("controller manager: a stand-in (Deployments, ReplicaSets and Jobs become ready; no pod runs)");
      await Promise.all([ensureNodeRingsTokens(layout), ensureRegistryPassword(layout)]);
      return startEmulatorSupervisor(layout, options, {
        admin,
        server: siteInfo.server,
        pid: sitePid,
        binDir,
        registryBinDir,
      });
    })(),
  ]);
  const registry = emulator.registry;
  if (registry === undefined) throw new SandboxError("the supervisor started no registry", { next: ["run up again"] });
  const password = await ensureRegistryPassword(layout);
  await writeDockerConfig(layout, registry.host, password);
  await ensureSigningKey(layout);
  const providers = await providersReady;
  const publishing = { layout, registry: registry.host, servePid: emulator.pid, password, binDir, providers, env, log };
  const published = await ensureRelease(publishing);
  const next = await ensureNextRelease(publishing);

  const url = emulator.url;
  const { setSite, updateConfig } = await import("@nodekit/site-config");
  await updateConfig(
    (config) => setSite(config, { name: SANDBOX_SITE, url, kubeconfig: layout.operatorKubeconfig }, { activate: true }),
    { path: layout.nvkectlConfig },
  );
  await writeWrappers(layout);
  await linkKubeTools(layout, binDir);
  await mkdir(layout.nrHome, { recursive: true, mode: 0o700 });
  const agent = await writeAgentStandIns(layout);
  const fleet = emulator.fleet === undefined ? undefined : await writeFleet(layout, emulator, agent);
  const info: SandboxInfo = {
    dir: layout.root,
    site: { server: site.info.server, adminKubeconfig: admin },
    controller: { url: emulator.url, audience: SANDBOX_AUDIENCE },
    operator: { user: OPERATOR_USER, kubeconfig: layout.operatorKubeconfig },
    nvkectl: { config: layout.nvkectlConfig, site: SANDBOX_SITE, binDir: layout.binDir, envFile: layout.envFile },
    noderings: {
      url: emulator.noderings?.url ?? "",
      tokenFile: layout.noderingsToken,
      adminTokenFile: layout.noderingsAdminToken,
    },
    nr: { home: layout.nrHome },
    agent,
    ...(fleet === undefined ? {} : { fleet }),
    registry: { url: registry.url, host: registry.host, user: REGISTRY_USER, dockerConfig: layout.dockerConfig },
    release: {
      tagReference: published.tagReference,
      pinnedReference: published.pinnedReference,
      policy: layout.policy,
      providers,
      note: STAND_IN_NOTE,
      next: { tagReference: next.tagReference, pinnedReference: next.pinnedReference },
    },
  };
  await writeFile(layout.envFile, `${environmentLines(info).join("\n")}\n`, { mode: 0o600 });
  await writeJson(layout.sandboxInfo, info);
  return info;
}

async function issueOperatorKubeconfig(layout: SandboxLayout, options: SandboxOptions): Promise<void> {
  const issued = await testenv(layout, options, ["kubeconfig", "--user", OPERATOR_USER]);
  const issuedPath = issued.stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (issued.exitCode !== 0 || issuedPath === "") {
    throw new SandboxError(`could not issue a kubeconfig for user "${OPERATOR_USER}"`, { why: issued.stderr.trim() });
  }
  await copyFile(issuedPath, layout.operatorKubeconfig);
  await chmod(layout.operatorKubeconfig, 0o600);
}

export interface SandboxStatus {
  dir: string;
  /** all: everything runs; partly: something is missing (`problems` says what); none: nothing runs. */
  running: "all" | "partly" | "none";
  site?: { server: string; adminKubeconfig: string; pid: number; etcd: number; kubeApiserver: number; since: string };
  controller?: {
    url: string;
    pid: number;
    since: string;
    /** The auth the emulator applies now, read from the site's auth ConfigMaps as it reads them. */
    auth: ControllerAuth;
    /** The audience it requires of bearer tokens, when auth is on. */
    audience?: string;
  };
  /** The NodeRings API emulator (the same supervisor as the controller's). */
  noderings?: { url: string; pid: number; since: string; tokenFile: string; nrHome: string };
  /** The registry (the same supervisor), and the signed release `up` published into it. */
  registry?: { url: string; host: string; pid: number; user: string; dockerConfig: string; storageDir: string };
  release?: SandboxInfo["release"];
  /** The stand-in for kube-controller-manager (the same supervisor): no pod runs, workloads are marked ready. */
  controllerStandIn?: { pid: number; retryMs: number; note: string };
  /** The agent's pretend VM for nr (the same supervisor): its cluster, and where its kubeconfig is. */
  agent?: { server: string; pids: readonly number[]; kubeconfig: string };
  tenants: TenantRecord[];
  nvkectl?: SandboxInfo["nvkectl"];
  operator?: SandboxInfo["operator"];
  problems: string[];
}

/**
 * The controller's auth: `on` (the audience, and the ConfigMap it came from), `off` (no auth
 * ConfigMap in either namespace), `broken` (one exists but gives no audience, or none is
 * readable), or `unknown` when the site could not be asked.
 */
export type ControllerAuth =
  | { mode: "on"; audience: string; source: string }
  | { mode: "off" }
  | { mode: "broken" | "unknown"; message: string };

/**
 * The auth the emulator applies now. It re-reads the site's auth ConfigMaps (at most 2 s old),
 * and an install's chart may have set another audience since `up`: so this reads them too,
 * through the emulator's own search and with the kubeconfig the emulator was given.
 */
async function controllerAuth(adminKubeconfig: string): Promise<ControllerAuth> {
  try {
    // Loaded here: only a running sandbox's status reads the site.
    const { Authenticator, connectSite } = await import("@nodekit/nvke-emulator");
    return await new Authenticator(connectSite(adminKubeconfig), { configTtlMs: 0 }).currentConfig();
  } catch (error) {
    return { mode: "unknown", message: `the site's auth ConfigMaps could not be read: ${(error as Error).message}` };
  }
}

/**
 * What runs, read from the sandbox's directory and checked against the processes. `auth:
 * false` leaves the controller's auth unread (`unknown`): `env` needs to know only that every
 * part runs, and reading the site's auth ConfigMaps loads the emulator's Kubernetes client.
 */
export async function status(options: SandboxOptions & { auth?: boolean }): Promise<SandboxStatus> {
  const layout = sandboxLayout(options.dir);
  const info = await readJson<SandboxInfo>(layout.sandboxInfo);
  const site = await testenvStatus(layout, options);
  const health = await emulatorHealth(layout);
  const emulator = health?.nvke ? health.record : undefined;
  const noderings = health?.noderings && health.record.noderings ? health.record : undefined;
  const registry = health?.registry && health.record.registry ? health.record.registry : undefined;
  const standIn = health?.record.controllerStandIn;
  const tenants = emulator === undefined ? [] : ((await readJson<TenantRecord[]>(layout.tenantsInfo)) ?? []);
  const auth: ControllerAuth | undefined =
    emulator === undefined
      ? undefined
      : options.auth === false
        ? { mode: "unknown", message: "not read" }
        : site.running && site.info
          ? await controllerAuth(site.info.adminKubeconfigPath)
          : { mode: "unknown", message: "the site cluster is not running" };
  const problems: string[] = [];
  if (!site.running) problems.push("the site cluster (kube-apiserver + etcd) is not running");
  if (emulator === undefined) problems.push("the NVKE controller emulator is not running");
  if (noderings === undefined) problems.push("the NodeRings API emulator is not running");
  if (registry === undefined) problems.push("the registry is not running");
  if (standIn === undefined) problems.push("the controller manager's stand-in is not running");
  const agent = health?.record.agent;
  if (agent === undefined) problems.push("the agent cluster (for nr) is not running");
  if (registry !== undefined && info !== undefined && info.registry?.host !== registry.host) {
    problems.push("the registry was restarted since up published the release into it");
  }
  if (info === undefined) problems.push("the sandbox was not set up (no sandbox.json)");
  const runs = [site.running, emulator !== undefined, noderings !== undefined, registry !== undefined].filter(
    Boolean,
  ).length;
  return {
    dir: layout.root,
    running: problems.length === 0 ? "all" : runs === 0 ? "none" : "partly",
    ...(site.running && site.info && site.pids && site.pid !== undefined
      ? {
          site: {
            server: site.info.server,
            adminKubeconfig: site.info.adminKubeconfigPath,
            pid: site.pid,
            etcd: site.pids.etcd,
            kubeApiserver: site.pids.kubeApiserver,
            since: site.startedAt ?? "",
          },
        }
      : {}),
    ...(emulator === undefined || auth === undefined
      ? {}
      : {
          controller: {
            url: emulator.url,
            pid: emulator.pid,
            since: emulator.startedAt,
            auth,
            ...(auth.mode === "on" ? { audience: auth.audience } : {}),
          },
        }),
    ...(noderings?.noderings === undefined
      ? {}
      : {
          noderings: {
            url: noderings.noderings.url,
            pid: noderings.pid,
            since: noderings.startedAt,
            tokenFile: layout.noderingsToken,
            nrHome: layout.nrHome,
          },
        }),
    ...(registry === undefined || health === undefined
      ? {}
      : {
          registry: {
            url: registry.url,
            host: registry.host,
            pid: health.record.pid,
            user: info?.registry?.user ?? REGISTRY_USER,
            dockerConfig: layout.dockerConfig,
            storageDir: registry.storageDir,
          },
        }),
    ...(registry !== undefined && info?.release !== undefined && info.registry?.host === registry.host
      ? { release: info.release }
      : {}),
    ...(standIn === undefined || health === undefined
      ? {}
      : {
          controllerStandIn: {
            pid: health.record.pid,
            retryMs: standIn.retryMs,
            note: "a stand-in for kube-controller-manager: Deployments get their ReplicaSet and both, and Jobs, a ready status; no pod runs",
          },
        }),
    ...(agent === undefined ? {} : { agent: { ...agent, kubeconfig: layout.agentKubeconfig } }),
    tenants,
    ...(info === undefined ? {} : { nvkectl: info.nvkectl, operator: info.operator }),
    problems,
  };
}

/** Stops everything the sandbox runs and removes its directory: no process, port or file is left. */
export async function down(options: SandboxOptions): Promise<{ wasRunning: boolean }> {
  const layout = sandboxLayout(options.dir);
  const emulatorWasRunning = await stopEmulator(layout, options.log);
  const before = await testenvStatus(layout, options);
  const stopped = await testenv(layout, options, ["down"]);
  if (stopped.exitCode !== 0) {
    throw new SandboxError("the site cluster did not stop", {
      why: stopped.stderr.trim(),
      next: [`look at ${join(layout.testenvDir, "supervisor.log")}, then run down again`],
    });
  }
  await rm(layout.root, { recursive: true, force: true, maxRetries: 3 });
  return { wasRunning: emulatorWasRunning || before.running };
}

/**
 * A kubeconfig for any client-certificate identity on the site cluster (CN the user, each
 * group an O), with no RBAC of its own: for trying grants, as docs/auth.md does. Its path.
 */
export async function kubeconfigFor(options: SandboxOptions & { user: string; groups?: string[] }): Promise<string> {
  const layout = sandboxLayout(options.dir);
  const issued = await testenv(layout, options, [
    "kubeconfig",
    "--user",
    options.user,
    ...(options.groups ?? []).flatMap((group) => ["--group", group]),
  ]);
  const path = issued.stdout.trim().split("\n").at(-1)?.trim() ?? "";
  if (issued.exitCode !== 0 || path === "") {
    throw new SandboxError(`could not issue a kubeconfig for user "${options.user}"`, {
      why: issued.stderr.trim() || "the site cluster is not running",
      next: ["start the sandbox first: ./run sandbox up"],
    });
  }
  return path;
}

export interface ServeOptions {
  dir: string;
  kubeconfig: string;
  siteServer: string;
  /** testenv's supervisor: when it goes, the site cluster is gone, and so does the emulator. */
  sitePid: number;
  binDir: string;
  /** Holds the distribution registry (tooling/registry-testbin). */
  registryBinDir: string;
  timing?: Partial<Timing>;
  /** How many pretend VMs of a fleet to run beside the agent's (`up --fleet N`). */
  fleet?: number;
  log: (line: string) => void;
}

/** How soon the controller and NICo stand-ins retry after a failed pass or watch (they reconcile on watch events): light on a shared machine. */
const STAND_IN_RETRY_MS = 500;
/** How soon the agent's Calico stand-in retries after a failed reconcile or watch (it reconciles on watch events): light on a shared machine. */
const CALICO_STAND_IN_RETRY_MS = 1_000;
/** k3s's default service CIDR: the agent cluster serves it, so nr's defaults fit it as they fit k3s. */
const AGENT_SERVICE_CIDR = "10.43.0.0/16";

interface AgentCluster {
  server: string;
  pids: readonly number[];
  stop(): Promise<void>;
}

/**
 * The agent's pretend VM for a real `nr cluster register`: a kube-apiserver + etcd of its
 * own, not the site cluster, because what nr and its stand-ins put there is the cluster's own
 * (a Node, Calico's and Liqo's CRDs and ClusterRoles, which no namespace scopes) and what reset
 * removes (the CRDs with `liqoctl uninstall --purge`, the node with k3s-uninstall.sh) must not
 * touch the NVKE site — as on a VM, where k3s is a cluster of its own. It serves k3s's service
 * CIDR. Beside it run what its pod-less tier lacks, the stand-ins apps/nr's day-2 test runs:
 * the controller manager's (testenv: Deployments ready, deleted namespaces finalized) and
 * Calico's operator's (@nodekit/nr-standins: TigeraStatus, and the node Ready once Calico is).
 */
async function startAgentCluster(
  vm: { clusterDir: string; kubeconfig: string; label: string },
  binDir: string,
  log: (line: string) => void,
) {
  const { startControlPlane } = await import("@nodekit/testenv");
  const { startControllerStandIn } = await import("@nodekit/testenv/controller-standin");
  const { calicoOperator } = await import("@nodekit/nr-standins");
  // What a supervisor killed outright left (its watchdog removes it too): a new cluster, as a new VM.
  await rm(vm.clusterDir, { recursive: true, force: true });
  const plane = await startControlPlane({
    binDir,
    dataDir: vm.clusterDir,
    serviceClusterIpRange: AGENT_SERVICE_CIDR,
    log: (line) => log(`${vm.label}: ${line}`),
  });
  try {
    await writePrivate(vm.kubeconfig, await readFile(plane.adminKubeconfigPath, "utf8"));
    const controllers = startControllerStandIn(vm.kubeconfig, { retryMs: STAND_IN_RETRY_MS });
    const stopCalico = calicoOperator(vm.kubeconfig, { retryMs: CALICO_STAND_IN_RETRY_MS });
    return {
      server: plane.server,
      pids: [plane.pids.etcd, plane.pids.kubeApiserver],
      async stop() {
        stopCalico();
        // Side by side: the controller stand-in's last pass waits on the API server, which
        // may be draining after SIGTERM; plane.stop() kills it after a few seconds, ending that pass.
        await Promise.all([controllers.stop(), plane.stop()]);
      },
    } satisfies AgentCluster;
  } catch (error) {
    await plane.stop();
    throw error;
  }
}

/** The helm the sandbox links into its bin (the testbin's): the version the NodeRings emulator pins, so nr uses it. */
async function helmVersion(binDir: string): Promise<string> {
  const result = await runProcess(join(binDir, "helm"), ["version", "--template", "{{.Version}}"], {
    timeoutMs: 30_000,
  });
  if (result.exitCode !== 0) {
    throw new SandboxError("the testbin's helm does not answer helm version", { why: result.stderr.trim() });
  }
  return result.stdout.trim();
}

/**
 * The emulator supervisor (`sandbox serve`, started detached by `up`): runs the NVKE
 * controller emulator with tenant API servers, and the NodeRings API emulator (its state in
 * the sandbox, only the sandbox's token accepted), until SIGTERM, SIGINT or SIGHUP, or until
 * the site cluster's supervisor is gone; then stops both — tenant API servers included.
 */
export async function serve(options: ServeOptions): Promise<void> {
  const layout = sandboxLayout(options.dir);
  const [token = "", adminToken = ""] = await Promise.all(
    [layout.noderingsToken, layout.noderingsAdminToken].map(async (path) => {
      const text = (await readFile(path, "utf8")).trim();
      if (text === "") throw new SandboxError(`${path} holds no token`, { next: ["run up again"] });
      return text;
    }),
  );
  const password = (await readFile(layout.registryPassword, "utf8")).trim();
  if (password === "")
    throw new SandboxError(`${layout.registryPassword} holds no password`, { next: ["run up again"] });
  const helm = await helmVersion(options.binDir);
  // The registry and the controller stand-in live as long as this supervisor (the registry's
  // own watchdog removes its storage if this process is killed outright).
  const { startRegistry } = await import("@nodekit/registry-harness");
  const registry = await startRegistry({
    kind: "distribution",
    auth: { type: "basic", users: { [REGISTRY_USER]: password } },
    binDir: options.registryBinDir,
  });
  const { startControllerStandIn } = await import("@nodekit/testenv/controller-standin");
  const standIn = startControllerStandIn(options.kubeconfig, { retryMs: STAND_IN_RETRY_MS });
  // The NICo provider's credential check, once an install has put the provider there: NICo
  // is not reachable here, so the stand-in accepts the one key the sandbox's guides use.
  const { startNicoProviderStandIn } = await import("@nodekit/testenv/nico-provider-standin");
  const nicoProvider = startNicoProviderStandIn(options.kubeconfig, {
    retryMs: STAND_IN_RETRY_MS,
    check: (key) =>
      key === SANDBOX_NICO_API_KEY
        ? { state: "HEALTHY", message: "the sandbox's NICo stand-in accepted the API key" }
        : { state: "INVALID", message: "NICo refused the API key (the sandbox's stand-in accepts its own key only)" },
  });
  const fleetNamesRun = fleetNames(options.fleet ?? 0);
  const vms = [
    { clusterDir: layout.agentClusterDir, kubeconfig: layout.agentKubeconfig, label: "agent cluster" },
    ...fleetNamesRun.map((name) => ({ ...fleetVmLayout(layout, name), label: `fleet ${name}` })),
  ];
  const clusters = await Promise.allSettled(vms.map((vm) => startAgentCluster(vm, options.binDir, options.log)));
  const running = clusters.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failed = clusters.find((result) => result.status === "rejected");
  if (failed !== undefined) {
    await Promise.all([nicoProvider.stop(), standIn.stop(), registry.stop(), ...running.map((c) => c.stop())]);
    throw failed.reason;
  }
  const [agent, ...fleet] = running;
  if (agent === undefined) throw new SandboxError("the agent cluster did not start", { next: ["run up again"] });
  // Side by side: the agent clusters' kube-apiservers and etcds take seconds to stop on a busy machine.
  const stopOwn = async () => {
    await Promise.all([nicoProvider.stop(), standIn.stop(), registry.stop(), ...running.map((c) => c.stop())]);
  };
  const { startNodeRingsEmulator } = await import("@nodekit/noderings-emulator");
  const noderingsLog = createWriteStream(layout.noderingsLog, { flags: "a", mode: 0o600 });
  // Its own log, one line per request (never a token), as `pnpm emulator:noderings` writes it.
  const noderings = await startNodeRingsEmulator({
    stateFile: layout.noderingsState,
    tokens: [{ token, account: "sandbox" }],
    adminToken,
    log: (line) => noderingsLog.write(`${new Date().toISOString()} ${line}\n`),
  });
  // The platform pins the helm the sandbox has (the testbin's, linked into its bin), as
  // apps/nr's end-to-end tests pin the machine's: nr then uses it for the operator chart.
  // Otherwise it would download the emulator's helm, a small program that only answers
  // `version`.
  const pins = structuredClone(noderings.pins);
  pins.tools.helm.version = helm;
  noderings.setPins(pins);
  const { startEmulator, testenvTenantApiServers } = await import("@nodekit/nvke-emulator");
  const emulator = await startEmulator({
    kubeconfigPath: options.kubeconfig,
    stateFile: layout.emulatorState,
    ...(options.timing === undefined ? {} : { timing: options.timing }),
    tenantApiServers: testenvTenantApiServers({
      binDir: options.binDir,
      dataRoot: layout.tenantsDir,
      log: options.log,
    }),
    log: options.log,
  }).catch(async (error: unknown) => {
    // Neither outlives a failed start: the supervisor exits, and `up` reports its log.
    await noderings.stop();
    await stopOwn();
    noderingsLog.end();
    throw error;
  });
  const record: EmulatorRecord = {
    pid: process.pid,
    url: emulator.url,
    noderings: { url: noderings.url },
    siteServer: options.siteServer,
    startedAt: new Date().toISOString(),
    registry: { url: registry.url, host: registry.host, storageDir: registry.storageDir },
    controllerStandIn: { retryMs: STAND_IN_RETRY_MS },
    agent: { server: agent.server, pids: agent.pids },
    ...(fleet.length === 0
      ? {}
      : { fleet: fleet.map((c, i) => ({ name: fleetNamesRun[i] ?? "", server: c.server, pids: c.pids })) }),
  };
  await writeJson(layout.emulatorInfo, record);
  options.log(`serving at ${emulator.url}; the NodeRings API at ${noderings.url} (its log: ${layout.noderingsLog})`);
  options.log(
    `the registry at ${registry.url} (Basic auth); the controller manager's stand-in, reconciling on each change`,
  );
  options.log(
    `the agent cluster at ${agent.server} (its kubeconfig: ${layout.agentKubeconfig}), with Calico's stand-in`,
  );

  let lastTenants = "";
  const recordTenants = async () => {
    const tenants: TenantRecord[] = emulator
      .tenants()
      .map((tenant) => ({ cluster: tenant.clusterName, server: tenant.server, pids: tenant.pids }));
    const text = JSON.stringify(tenants);
    if (text === lastTenants) return;
    lastTenants = text;
    await writeJson(layout.tenantsInfo, tenants);
  };
  await recordTenants();

  const recording = setInterval(
    () => void recordTenants().catch((error: unknown) => options.log(`cannot write ${layout.tenantsInfo}: ${error}`)),
    1_000,
  );
  const why = await untilStopped({ owner: options.sitePid });
  clearInterval(recording);
  options.log(
    `stopping: ${why.startsWith("owner") ? `the site cluster's supervisor (pid ${options.sitePid}) is gone` : why}`,
  );
  await Promise.all([emulator.stop(), noderings.stop(), stopOwn()]);
  await new Promise((resolve) => noderingsLog.end(resolve));
  await rm(layout.emulatorInfo, { force: true });
  await rm(layout.tenantsInfo, { force: true });
}
