import { UserError } from "@nodekit/errors";
import type { KubeTarget } from "@nodekit/kube";
import {
  createStateStore,
  foreseeRun,
  type PlannedRun,
  planPhases,
  type RunResult,
  type RunState,
  runPhases,
  selectPhases,
} from "@nodekit/phase-runner";
import type { JsonValue } from "@nodekit/plan";
import type { ProcessRunner } from "@nodekit/process";
import { type Arch, fetchPins, offlinePins, type PinsSource, type ResolvedPins } from "@nodekit/version-pins";
import { errorCodes } from "../errors.ts";
import type { PhaseUses, RegisterContext } from "../register/context.ts";
import { RecordedAgent, RecordedNetwork, recorded } from "../register/meta.ts";
import { agent } from "../register/phases/agent.ts";
import { k3s } from "../register/phases/k3s.ts";
import { apiServerUnknown, liqo } from "../register/phases/liqo.ts";
import { operator } from "../register/phases/operator.ts";
import { isPrecheckId, PRECHECK_IDS } from "../register/phases/prechecks.ts";
import { REGISTER_PHASES } from "../register/phases.ts";
import { calicoManifestsBase } from "./calico.ts";
import { readProxmoxCredentials, terminalPrompt } from "./credentials.ts";
import {
  apiEndpoint,
  assertNrHome,
  displayPath,
  loadNrConfig,
  type NrPaths,
  nrLockPath,
  nrPaths,
  readApiTokenFile,
} from "./home.ts";
import { createHostFactsSource, type HostFacts } from "./host.ts";
import { assertNetworkUnchanged, networkPlan } from "./network.ts";
import { checkOffloadNamespaces, type NrSecret } from "./offload.ts";
import {
  clearLeftovers,
  kubeFailure,
  nodeRingsApi,
  supportedArch,
  type ToolRunServiceOptions,
  toolRunContext,
} from "./run-parts.ts";
import { resolveK3sInstaller, resolveTool } from "./tools.ts";

/** k3s writes its kubeconfig here; `--kubeconfig` names another (an existing cluster). */
export const K3S_KUBECONFIG = "/etc/rancher/k3s/k3s.yaml";

const OPERATOR = {
  namespace: "proxmox-operator",
  release: "proxmox-operator",
  secretName: "proxmox-credentials",
};

/** The Secrets nr creates in the agent cluster: their namespaces are never offloaded. */
const NR_SECRETS: readonly NrSecret[] = [
  { namespace: OPERATOR.namespace, name: OPERATOR.secretName, holds: "the Proxmox credentials" },
];

const SELECTION_LABELS = { skip: "--skip-phases", from: "--from-phase", only: "--only-phase" };
const RESUME_LABELS = { resume: "--resume", restart: "--restart" };

export interface RegisterOptions extends ToolRunServiceOptions {
  name?: string | undefined;
  agentId?: string | undefined;
  apiUrl?: string | undefined;
  /** `--api-token-file`: the API token is read from this file (mode 0600), ahead of NR_API_TOKEN and the config. */
  apiTokenFile?: string | undefined;
  kubeconfig?: string | undefined;
  podCidr?: string | undefined;
  serviceCidr?: string | undefined;
  /** Where NodeRings reaches this cluster's API server, for Liqo (default: https://<the default route's address>:6443). */
  apiServerUrl?: string | undefined;
  offload: readonly string[];
  skipPrechecks: boolean;
  /** `--ignore-precheck`: checks whose failure is only reported (kubeadm's --ignore-preflight-errors). */
  ignorePrechecks?: readonly string[];
  offline: boolean;
  skipOperator: boolean;
  proxmoxCredentials?: string | undefined;
  proxmoxUrl?: string | undefined;
  proxmoxTokenId?: string | undefined;
  operatorChart?: string | undefined;
  calicoManifests?: string | undefined;
  resume: boolean;
  restart: boolean;
  skipPhases: readonly string[];
  fromPhase?: string | undefined;
  onlyPhase?: string | undefined;
  dryRun: boolean;
  waitSeconds: number;
  pollMs: number;
  /** The deadline of each NodeRings API request (default 30 s). */
  apiTimeoutMs?: number | undefined;
  /** A directory laid out like a machine's (/etc/os-release, /proc), for the prechecks. */
  hostRoot?: string | undefined;
}

export type RegisterOutcome =
  | { kind: "plan"; planned: PlannedRun }
  | {
      kind: "done";
      result: RunResult;
      /** The agent registered as (what its phase recorded). */
      agent: { name: string; agentId: string } | undefined;
      installedTools: string[];
      operatorSkipped: boolean;
      stateFile: string;
    };

function agentIdentity(options: RegisterOptions, state: RunState | undefined): { name?: string; agentId?: string } {
  // Only an agent NodeRings accepted binds the machine: a name it refused (or a run stopped
  // before the agent phase was done) is no identity to continue with, nor one to keep to.
  const registeredAs = registeredAgent(state);
  const given = options.agentId ?? options.name;
  if (given === undefined) {
    if (registeredAs?.name !== undefined || registeredAs?.agentId !== undefined) return registeredAs;
    throw new UserError(errorCodes.AGENT_IDENTITY_MISSING, "which agent to register as was not given", {
      why: "registration creates (or reuses) an agent in NodeRings, by name or by id",
      next: ["give --name NAME to create or reuse the agent named so", "or --agent-id ID to reuse an existing agent"],
    });
  }
  if (registeredAs !== undefined) {
    const differs =
      (options.name !== undefined && registeredAs.name !== undefined && options.name !== registeredAs.name) ||
      (options.agentId !== undefined && registeredAs.agentId !== undefined && options.agentId !== registeredAs.agentId);
    if (differs) {
      throw new UserError(
        errorCodes.AGENT_IDENTITY_CHANGED,
        `this machine's state is registered as agent ${registeredAs.name ?? registeredAs.agentId}, not ${given}`,
        {
          why: "one machine is one agent: its cluster and peering belong to the agent it registered as",
          next: "leave out --name/--agent-id to continue, or start over with --restart to register it as another agent",
        },
      );
    }
  }
  return options.agentId !== undefined ? { agentId: options.agentId } : { name: options.name as string };
}

/** The agent the state says this machine registered as: recorded, and its agent phase done. */
function registeredAgent(state: RunState | undefined): { name?: string; agentId?: string } | undefined {
  if (state?.phases[agent.id]?.state !== "done") return undefined;
  return recorded(RecordedAgent, state.meta.agent);
}

function memo<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

/**
 * `nr cluster register`: reads the config and the state, fetches the pins (or takes the
 * offline ones), resolves the companion tools, reads the Proxmox credentials, and then
 * runs the ten phases — or, with `dryRun`, plans them and changes nothing.
 */
export async function register(options: RegisterOptions): Promise<RegisterOutcome> {
  const { env, redactor } = options;
  const selection = { skip: options.skipPhases, from: options.fromPhase, only: options.onlyPhase };
  // An unknown phase is a usage error: said before anything is read or asked.
  selectPhases(REGISTER_PHASES, selection, SELECTION_LABELS);
  const paths = nrPaths(env);
  // Before anything in it is read or run: another user who may write there decides what nr does as root.
  await assertNrHome(paths);
  const config = await loadNrConfig(paths);
  const tokenFromFile = options.apiTokenFile === undefined ? undefined : await readApiTokenFile(options.apiTokenFile);
  const endpoint = apiEndpoint({ apiUrl: options.apiUrl, tokenFromFile }, config, env);
  if (endpoint.token !== undefined) redactor.add(endpoint.token, "the NodeRings API token");
  const store = createStateStore({ path: paths.state });
  const existing = await store.read(REGISTER_PHASES);
  const identity = agentIdentity(options, options.restart ? undefined : existing);
  // The network plan is fixed once k3s ran: a range not given is the recorded one, another one is refused.
  const recordedNetwork = recorded(RecordedNetwork, existing?.meta.network);
  const network = networkPlan({ podCidr: options.podCidr, serviceCidr: options.serviceCidr }, recordedNetwork);
  assertNetworkUnchanged(network, (existing?.phases[k3s.id]?.runs ?? 0) > 0 ? recordedNetwork : undefined);
  const unknownChecks = (options.ignorePrechecks ?? []).filter((id) => !isPrecheckId(id));
  if (unknownChecks.length > 0) {
    throw new UserError(
      errorCodes.PRECHECK_UNKNOWN,
      `--ignore-precheck ${unknownChecks.join(", ")}: there is no such precheck; nothing was done`,
      {
        next: `name a check as a failed precheck names it: ${PRECHECK_IDS.join(", ")}`,
      },
    );
  }
  // Before any phase: Liqo would reflect such a namespace's Secrets to NodeRings.
  checkOffloadNamespaces(options.offload, NR_SECRETS);

  const api = nodeRingsApi(endpoint, options);
  const host = createHostFactsSource(options.hostRoot === undefined ? {} : { root: options.hostRoot });
  const facts = await host.facts();
  const arch = supportedArch(facts);
  const apiServer = apiServerOf(options.apiServerUrl, facts.network);

  const pins = await resolvePins(options, config, api, arch);
  const kube: KubeTarget = { kubeconfig: options.kubeconfig ?? K3S_KUBECONFIG };
  const tools = companionTools({ pins, arch, paths, runner: options.runner, env });
  const credentialsSource =
    options.proxmoxCredentials === "-"
      ? "standard input"
      : options.proxmoxCredentials !== undefined
        ? `file ${options.proxmoxCredentials}`
        : env.NR_PROXMOX_TOKEN_SECRET
          ? "environment"
          : "prompt";
  const credentials = memo(() =>
    readProxmoxCredentials({
      file: options.proxmoxCredentials,
      url: options.proxmoxUrl,
      tokenId: options.proxmoxTokenId,
      env,
      prompt: terminalPrompt(),
      onSecret: (secret) => redactor.add(secret, "the Proxmox token secret"),
    }),
  );
  const installed: string[] = [];
  const context: RegisterContext = {
    api,
    pins,
    arch,
    identity,
    network,
    apiServer,
    host,
    skipPrechecks: options.skipPrechecks,
    ignorePrechecks: options.ignorePrechecks ?? [],
    warn: options.warn,
    kube,
    paths,
    runner: options.runner,
    tools,
    calicoManifests: options.calicoManifests ?? calicoManifestsBase(pins.pins.tools.calico.version),
    offload: options.offload,
    operator: {
      skip: options.skipOperator,
      ...operatorRelease(pins, options.operatorChart),
      credentialsSource,
      credentials,
    },
    ...toolRunContext(options, paths, installed),
  };
  const common = {
    name: "nr cluster register",
    phases: REGISTER_PHASES,
    context,
    store,
    resume: options.resume,
    restart: options.restart,
    selection,
    labels: SELECTION_LABELS,
    resumeLabels: RESUME_LABELS,
  };
  // Before anything is installed, for the phases that will run only (as far as can be told
  // before their probes): the tools they use must be here or downloadable, and the secrets
  // they write are read now, not mid-run (never in a dry run).
  const running = foreseeRun(common, existing).filter((decision) => decision.action === "run");
  if (apiServer.url === undefined && !options.dryRun && running.some((decision) => decision.id === liqo.id)) {
    throw apiServerUnknown();
  }
  const uses = running.flatMap((decision) => REGISTER_PHASES.find((entry) => entry.id === decision.id)?.uses ?? []);
  await prepare(uses, tools, options.dryRun ? undefined : credentials);
  if (options.dryRun) return { kind: "plan", planned: await planPhases(common) };

  const meta: Record<string, JsonValue> = {
    agent: { ...identity },
    api: endpoint.url,
    pins: {
      name: pins.pins.name,
      origin: pins.origin,
      source: pins.source,
      hash: pins.hash,
      versions: Object.fromEntries(Object.entries(pins.pins.tools).map(([tool, pin]) => [tool, pin.version])),
    },
    network: { ...network },
    kubeconfig: kube.kubeconfig,
    operator: options.skipOperator ? "skipped" : "install",
    offload: [...options.offload],
  };
  const result = await runPhases({
    ...common,
    runner: options.planRunner ?? options.runner,
    redactor,
    meta,
    // One lock for the machine, not one per NR_HOME.
    lock: { path: nrLockPath(env) },
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    describeFailure: kubeFailure("registering", kube.kubeconfig),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    beforeRun: () => clearLeftovers(paths, env, options.warn),
  });
  const registered = result.outputs.recorded(agent);
  return {
    kind: "done",
    result,
    agent: registered === undefined ? undefined : { name: registered.name, agentId: registered.agentId },
    installedTools: installed,
    operatorSkipped: result.state.phases[operator.id]?.state === "skipped",
    stateFile: paths.state,
  };
}

/**
 * The pins a run installs: the platform's for this architecture, or with `offline` the ones in
 * ~/.nr/config.yaml (`pins:`) over the shipped defaults, each of its warnings given.
 */
export async function resolvePins(
  options: { offline: boolean; warn: (message: string) => void },
  config: Awaited<ReturnType<typeof loadNrConfig>>,
  api: PinsSource,
  arch: Arch,
): Promise<ResolvedPins> {
  if (!options.offline) return fetchPins(api, { arch });
  const section = (config.document?.value as { pins?: unknown } | null | undefined)?.pins;
  const pins =
    section === undefined || config.document === undefined
      ? offlinePins()
      : offlinePins({ defaults: config.document, at: ["pins"], source: config.path });
  for (const warning of pins.warnings) options.warn(warning);
  return pins;
}

/** The companion tools the phases use, each resolved (found, or planned for download) once, when first asked. */
export function companionTools(input: {
  pins: ResolvedPins;
  arch: Arch;
  paths: NrPaths;
  runner: ProcessRunner;
  env: NodeJS.ProcessEnv;
}): RegisterContext["tools"] {
  const { pins, arch, paths, runner, env } = input;
  return {
    liqoctl: memo(() => resolveTool("liqoctl", { pins, arch, paths, runner, env })),
    helm: memo(() => resolveTool("helm", { pins, arch, paths, runner, env })),
    k3sInstaller: memo(() => resolveK3sInstaller({ pins, arch, paths, env })),
  };
}

/** The operator's release: the pinned chart (or `--operator-chart`) and version, its namespace, release and Secret names. */
export function operatorRelease(
  pins: ResolvedPins,
  chartOption: string | undefined,
): Omit<RegisterContext["operator"], "skip" | "credentialsSource" | "credentials"> {
  const pin = pins.pins.tools["proxmox-operator"];
  const chart =
    chartOption ??
    `${pin.chart?.repository ?? "oci://registry.noderings.io/charts"}/${pin.chart?.name ?? "proxmox-operator"}`;
  return { chart, version: pin.version, ...OPERATOR };
}

/**
 * Where NodeRings reaches this cluster's API server, for `liqoctl install --api-server-url`:
 * the URL given, or https://<the default route's address>:6443 — the address k3s takes as its
 * node IP, which its serving certificate covers. Liqo refuses a localhost URL
 * (liqotech/liqo@v1.0.1 pkg/liqoctl/install/validation.go), and with none the k3s provider
 * leaves the address empty, as its kubeconfig's is 127.0.0.1. A URL given by name is added
 * to k3s's certificate (`--tls-san`).
 */
export function apiServerOf(given: string | undefined, network: HostFacts["network"]): RegisterContext["apiServer"] {
  if (given === undefined) {
    return { url: network === null ? undefined : `https://${network.address}:6443`, nodeSubnet: network?.subnet };
  }
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch {}
  if (url?.protocol !== "https:" || ["localhost", "127.0.0.1", "[::1]", "0.0.0.0"].includes(url.hostname)) {
    throw new UserError(
      errorCodes.NETWORK_PLAN_INVALID,
      `--api-server-url ${JSON.stringify(given)} is not an https:// URL NodeRings can reach`,
      {
        why: "Liqo tells NodeRings this URL for this cluster's API server; it refuses a localhost one",
        next: "give the address (or name) of this machine that NodeRings reaches, e.g. --api-server-url https://203.0.113.7:6443",
      },
    );
  }
  return { url: given, tlsSan: url.hostname.replace(/^\[|\]$/g, ""), nodeSubnet: network?.subnet };
}

/**
 * Resolves each tool the phases that will run use (found here, or planned for download:
 * a tool that cannot be had fails now, before anything is installed), and reads each secret
 * they write. Every one is asked once, in the phases' order.
 */
async function prepare(
  uses: readonly PhaseUses[],
  tools: RegisterContext["tools"],
  credentials: (() => Promise<unknown>) | undefined,
): Promise<void> {
  for (const tool of new Set(uses.flatMap((entry) => entry.tools ?? []))) await tools[tool]();
  if (credentials !== undefined && uses.some((entry) => entry.secrets?.includes("proxmox"))) await credentials();
}

/** The PATH advice after nr installed a tool into ~/.nr/bin (NR-5). */
export function pathAdvice(env: NodeJS.ProcessEnv = process.env): string {
  const bin = nrPaths(env).bin;
  return `keep ${displayPath(bin, env)} on your PATH for later liqoctl and helm use: export PATH="${bin}:$PATH"`;
}
