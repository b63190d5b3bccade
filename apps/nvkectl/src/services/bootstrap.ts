import { access } from "node:fs/promises";
import { connect, isIP } from "node:net";
import { dirname, join, resolve } from "node:path";
import { UserError } from "@nodekit/errors";
import { checkWriteTarget, restrictFile, writeFileSafe } from "@nodekit/fs-safe";
import { atLeast } from "@nodekit/kube";
import { action, createPlan, exec, type Plan, type PlanStep, runPlan } from "@nodekit/plan";
import type { CommandCall, ProcessRunner } from "@nodekit/process";
import { readSiteSpec, type SiteSpec } from "@nodekit/sitespec";
import { dump } from "js-yaml";
import { errorCodes } from "../errors.ts";
import { type RequiredTool, SITE_KUBE_TOOLS, toolProblems } from "./tools.ts";

const semverIn = (text: string): string | undefined => /v?(\d+\.\d+\.\d+)/.exec(text)?.[0];

/**
 * The kind node image the site cluster runs: the one kind v0.30.0 was released with
 * (Kubernetes v1.34.0; kind's pkg/apis/config/defaults/image.go at v0.30.0, listed in its
 * release notes), pinned by digest. kind's quick start: take node images from the release
 * notes of the kind version in use, so kind must be at least that release.
 */
export const KIND_NODE_IMAGE =
  "kindest/node:v1.34.0@sha256:7416a61b42b1662ca6ca89f02028ac133a309a2a30ba309614e8ec94d976dc5a";
/**
 * The oldest kind: the release the pinned node image was built for. (NetworkPolicy alone
 * would need v0.24.0, where kindnet began enforcing it: kubernetes-sigs/kind#842, PR #3612.)
 */
const KIND_MINIMUM = "v0.30.0";
/** The controller API's NodePort, as the shipped chart sets it (deploy/nico/nvke-controller/values.yaml service.nodePort). */
export const CONTROLLER_NODE_PORT = 30080;
/** Where the site cluster's API server listens on the bootstrap host. */
const API_SERVER_PORT = 6443;
const CONTAINERD_MINIMUM = "v1.7.0";

/** What site bootstrap needs on the host (NV-4) besides a running containerd, with the oldest version it works with. */
const BOOTSTRAP_TOOLS: readonly RequiredTool[] = [
  { spec: { command: "nerdctl", versionArgs: ["--version"], parse: semverIn }, minimum: "v1.7.0" },
  { spec: { command: "kind", versionArgs: ["version"], parse: semverIn }, minimum: KIND_MINIMUM },
  ...SITE_KUBE_TOOLS,
];

export interface BootstrapOptions {
  siteSpec: string;
  /** Where `<site>.kubeconfig` (and `<site>.kind.yaml`) is written. Default: beside the site spec. */
  kubeconfigDir?: string | undefined;
  /** The bootstrap host's address the API server listens on and its certificate names. Default: the one this host reaches the site's hosts from. */
  apiServerAddress?: string | undefined;
  runner: ProcessRunner;
  dryRun: boolean;
  /** How long each host's TCP check may take. */
  reachTimeoutMs?: number;
  cwd?: string;
}

/** Whether a TCP connection to host:port opens within the timeout: the local address it left from, or the problem. */
function reach(host: string, port: number, timeoutMs: number): Promise<{ problem?: string; localAddress?: string }> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (result: { problem?: string; localAddress?: string }) => {
      socket.destroy();
      done(result);
    };
    socket.setTimeout(timeoutMs, () => finish({ problem: `no answer in ${timeoutMs / 1000}s` }));
    socket.once("connect", () =>
      finish(socket.localAddress === undefined ? {} : { localAddress: socket.localAddress }),
    );
    socket.once("error", (error: NodeJS.ErrnoException) => finish({ problem: error.code ?? error.message }));
  });
}

/**
 * What kind (through nerdctl) takes from the environment beyond what every program gets
 * (@nodekit/process INHERITED_ENV): which containerd and how nerdctl is configured, and
 * where registry logins are, never their contents.
 */
const KIND_ENV = [
  "CONTAINERD_ADDRESS",
  "CONTAINERD_NAMESPACE",
  "CONTAINERD_SNAPSHOTTER",
  "NERDCTL_TOML",
  "CNI_PATH",
  "NETCONFPATH",
  "DOCKER_CONFIG",
];

const kindCall = (args: readonly string[]): CommandCall => ({
  command: "kind",
  args,
  env: { KIND_EXPERIMENTAL_PROVIDER: "nerdctl" },
  inheritEnv: KIND_ENV,
});

/**
 * containerd as a running daemon, not a binary on PATH: `nerdctl version` asks the daemon
 * for its version (containerd's Version API) and fails when it cannot reach it
 * (nerdctl's cmd/nerdctl/version.go), so it answers only when containerd runs.
 */
async function checkContainerd(runner: ProcessRunner): Promise<string | undefined> {
  const answer = await runner.run(
    { command: "nerdctl", args: ["version", "--format", "{{json .}}"], inheritEnv: KIND_ENV },
    { allowFailure: true },
  );
  let components: Array<{ Name?: string; Version?: string }> = [];
  try {
    const parsed = JSON.parse(answer.stdout) as { Server?: { Components?: typeof components } | null };
    components = parsed.Server?.Components ?? [];
  } catch {
    // no JSON: nerdctl said why on stderr
  }
  const version = components.find((component) => component.Name === "containerd")?.Version;
  if (answer.exitCode !== 0 || version === undefined) {
    const why = answer.stderr.trim().split("\n").at(-1) ?? "";
    return `containerd: not running, or nerdctl cannot reach it${why === "" ? "" : ` (${why})`}; need a running containerd ${CONTAINERD_MINIMUM} or newer (systemctl start containerd)`;
  }
  if (!(await atLeast(version, CONTAINERD_MINIMUM))) {
    return `containerd: the running daemon is ${version}, need ${CONTAINERD_MINIMUM} or newer`;
  }
  return undefined;
}

/** Every missing or too old tool, and a containerd that does not run, each with what was found and what is needed. */
async function checkPrerequisites(runner: ProcessRunner): Promise<string[]> {
  const problems = await toolProblems(runner, BOOTSTRAP_TOOLS);
  // Without nerdctl there is nothing to ask containerd with; that problem is listed already.
  if (problems.some((line) => line.startsWith("nerdctl: not found"))) return problems;
  const containerd = await checkContainerd(runner);
  return containerd === undefined ? problems : [...problems.slice(0, 1), containerd, ...problems.slice(1)];
}

/** The hosts whose nvke-agent port does not answer (checked concurrently), and the local addresses the others were reached from. */
async function checkHosts(site: SiteSpec, timeoutMs: number) {
  const port = site.spec.agentPort;
  const results = await Promise.all(
    site.spec.hosts.map(async (host) => ({ host, ...(await reach(host.ip, port, timeoutMs)) })),
  );
  return {
    unreachable: results.flatMap((r) =>
      r.problem === undefined ? [] : [`${r.host.name} (${r.host.ip}:${port}): ${r.problem}`],
    ),
    localAddresses: results.flatMap((r) => (r.localAddress === undefined ? [] : [r.localAddress])),
  };
}

/**
 * The kind cluster's configuration (kind.x-k8s.io/v1alpha4): one control-plane node of the
 * pinned image, the controller API's NodePort mapped to the same port on the bootstrap host
 * (so that the site's clients reach it there, docs/install.md), and the API server on the
 * host's address instead of kind's default 127.0.0.1 (kind also names that address in the
 * API server's certificate and in the kubeconfig it writes).
 */
function kindConfig(apiServerAddress: string): string {
  return dump(
    {
      kind: "Cluster",
      apiVersion: "kind.x-k8s.io/v1alpha4",
      networking: { apiServerAddress, apiServerPort: API_SERVER_PORT },
      nodes: [
        {
          role: "control-plane",
          image: KIND_NODE_IMAGE,
          extraPortMappings: [
            {
              containerPort: CONTROLLER_NODE_PORT,
              hostPort: CONTROLLER_NODE_PORT,
              listenAddress: "0.0.0.0",
              protocol: "TCP",
            },
          ],
        },
      ],
    },
    { lineWidth: -1 },
  );
}

interface BootstrapObservations {
  existing: readonly string[];
  kubeconfigExists: boolean;
  apiServerAddress: string;
}

/**
 * The bootstrap as a plan: write the kind configuration and create the kind cluster on
 * nerdctl; for a cluster that exists already, restore a kubeconfig that is gone
 * (`kind export kubeconfig`) and leave the rest as it is; then restrict the kubeconfig.
 */
function planBootstrap(site: SiteSpec, files: { kubeconfig: string; kindConfig: string }, seen: BootstrapObservations) {
  const name = site.metadata.name;
  const exists = seen.existing.includes(name);
  const restrict = action("restrict-file", `chmod 0600 ${files.kubeconfig}`, {
    mutates: true,
    params: { path: files.kubeconfig },
  });
  let title: string;
  let steps: PlanStep[];
  if (!exists) {
    title = `kind cluster ${name} on nerdctl, its API server on ${seen.apiServerAddress}:${API_SERVER_PORT}, NodePort ${CONTROLLER_NODE_PORT} on this host`;
    steps = [
      action(
        "write-file",
        `write ${files.kindConfig} (the kind cluster's configuration: node image ${KIND_NODE_IMAGE}, API server on ${seen.apiServerAddress}:${API_SERVER_PORT}, port ${CONTROLLER_NODE_PORT} mapped to the node)`,
        { mutates: true, params: { path: files.kindConfig, content: kindConfig(seen.apiServerAddress) } },
      ),
      exec(
        kindCall([
          "create",
          "cluster",
          "--name",
          name,
          "--config",
          files.kindConfig,
          "--kubeconfig",
          files.kubeconfig,
          "--wait",
          "5m",
        ]),
        { mutates: true, reads: [files.kindConfig] },
      ),
      restrict,
    ];
  } else if (!seen.kubeconfigExists) {
    title = `kind cluster ${name} exists already; its kubeconfig ${files.kubeconfig} is gone: restored`;
    steps = [
      exec(kindCall(["export", "kubeconfig", "--name", name, "--kubeconfig", files.kubeconfig]), { mutates: true }),
      restrict,
    ];
  } else {
    title = `kind cluster ${name} exists already, and its kubeconfig ${files.kubeconfig}`;
    steps = [];
  }
  return createPlan(`bootstrap the management cluster of site ${name}`, [{ id: "kind-cluster", title, steps }], {
    site: name,
    existingClusters: [...seen.existing],
    kubeconfigExists: seen.kubeconfigExists,
    apiServerAddress: seen.apiServerAddress,
    nodeImage: KIND_NODE_IMAGE,
  });
}

/** The address given, or the one this host reached the site's hosts from; BOOTSTRAP_API_SERVER_ADDRESS_INVALID otherwise. */
function chooseApiServerAddress(given: string | undefined, localAddresses: readonly string[]): string {
  if (given !== undefined) {
    if (isIP(given) === 0 || given === "0.0.0.0" || given === "::") {
      throw new UserError(
        errorCodes.BOOTSTRAP_API_SERVER_ADDRESS_INVALID,
        `--api-server-address ${JSON.stringify(given)} is not an address of this host`,
        {
          why: "kind's API server listens on it and its certificate names it, so it must be one IP address that the site's clients reach this host at (kind: apiServerAddress \"should be an IP address\")",
          next: "give this host's IP address on the site's network, e.g. --api-server-address 10.20.0.5",
          facts: { address: given },
        },
      );
    }
    return given;
  }
  const [first] = localAddresses;
  if (first === undefined) {
    throw new UserError(
      errorCodes.BOOTSTRAP_API_SERVER_ADDRESS_INVALID,
      "this host's address on the site's network could not be told",
      {
        why: "the API server listens on the address this host reaches the site's hosts from, and no host was reached",
        next: "name it with --api-server-address IP",
      },
    );
  }
  return first.replace(/^::ffff:/, "");
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * `nvkectl site bootstrap`: checks every prerequisite and every host first (all problems
 * at once), then creates the kind cluster and writes `<site>.kubeconfig` (0600); on a re-run,
 * restores that kubeconfig when it is gone.
 */
export async function bootstrapSite(options: BootstrapOptions): Promise<{ plan: Plan; kubeconfig: string }> {
  const cwd = options.cwd ?? process.cwd();
  const site = await readSiteSpec(options.siteSpec, { cwd });
  const [missing, hosts] = await Promise.all([
    checkPrerequisites(options.runner),
    checkHosts(site, options.reachTimeoutMs ?? 3000),
  ]);
  const { unreachable } = hosts;
  if (missing.length > 0) {
    throw new UserError(
      errorCodes.BOOTSTRAP_PREREQUISITES_MISSING,
      `site bootstrap needs ${missing.length} tool${missing.length === 1 ? "" : "s"} this host lacks:\n  ${missing.join("\n  ")}`,
      {
        why: "the site cluster is a kind cluster on nerdctl and a running containerd; helm, kubectl and clusterctl install the stack on it",
        ...(unreachable.length === 0 ? {} : { next: `also unreachable: ${unreachable.join("; ")}` }),
        facts: { missing: missing.length },
      },
    );
  }
  if (unreachable.length > 0) {
    throw new UserError(
      errorCodes.HOSTS_UNREACHABLE,
      `${unreachable.length} of ${site.spec.hosts.length} hosts do not answer on the nvke-agent port:\n  ${unreachable.join("\n  ")}`,
      {
        why: "the site's controllers reach each host's nvke-agent",
        next: "check that nvke-agent runs on those hosts and that no firewall blocks the port",
        facts: { unreachable: unreachable.length },
      },
    );
  }
  const apiServerAddress = chooseApiServerAddress(options.apiServerAddress, hosts.localAddresses);
  const dir = resolve(cwd, options.kubeconfigDir ?? dirname(resolve(cwd, options.siteSpec)));
  const files = {
    kubeconfig: join(dir, `${site.metadata.name}.kubeconfig`),
    kindConfig: join(dir, `${site.metadata.name}.kind.yaml`),
  };
  // kind writes (merges into) the kubeconfig and we narrow it next: never through a link
  // planted there, never another user's file (issue 9, item 1). Checked in the dry run too.
  await checkWriteTarget(files.kubeconfig, { what: "the site kubeconfig" });
  await checkWriteTarget(files.kindConfig, { what: "the kind configuration" });
  const listed = await options.runner.run(kindCall(["get", "clusters"]));
  const existing = listed.stdout
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const plan = planBootstrap(site, files, {
    existing,
    kubeconfigExists: await exists(files.kubeconfig),
    apiServerAddress,
  });
  if (!options.dryRun) {
    await runPlan(plan, {
      runner: options.runner,
      actions: {
        "write-file": async (step) => {
          await writeFileSafe(String(step.params?.path), String(step.params?.content), {
            mode: 0o600,
            what: "the kind configuration",
          });
        },
        "restrict-file": async (step) =>
          restrictFile(String(step.params?.path), 0o600, { what: "the site kubeconfig" }),
      },
    });
  }
  return { plan, kubeconfig: files.kubeconfig };
}
