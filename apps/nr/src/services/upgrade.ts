import { join } from "node:path";
import { type Problem, UserError } from "@nodekit/errors";
import {
  createStateStore,
  hashInputs,
  type PlannedRun,
  type PriorOutputs,
  planPhases,
  type RunResult,
  type RunState,
  runPhases,
} from "@nodekit/phase-runner";
import type { ResolvedPins } from "@nodekit/version-pins";
import { errorCodes } from "../errors.ts";
import type { RegisterContext } from "../register/context.ts";
import { RecordedNetwork, RecordedPins, recorded } from "../register/meta.ts";
import { agent } from "../register/phases/agent.ts";
import { calico } from "../register/phases/calico.ts";
import { k3s } from "../register/phases/k3s.ts";
import { liqo } from "../register/phases/liqo.ts";
import { operator } from "../register/phases/operator.ts";
import { outboundPeer } from "../register/phases/outbound-peer.ts";
import { REGISTER_PHASES } from "../register/phases.ts";
import type { UpgradeContext } from "../upgrade/context.ts";
import { REFRESHED, UPGRADE_PHASES, UPGRADE_STATE } from "../upgrade/phases.ts";
import { describeViolation, planUpgrade, type UpgradePlan } from "../upgrade/plan.ts";
import { registeredOutputs } from "../upgrade/registration.ts";
import { minorOf, type SkewViolation, type UpgradeComponent } from "../upgrade/skew.ts";
import { calicoManifestsBase } from "./calico.ts";
import { apiEndpoint, assertNrHome, loadNrConfig, nrLockPath, nrPaths } from "./home.ts";
import { createHostFactsSource } from "./host.ts";
import { apiServerOf, companionTools, K3S_KUBECONFIG, operatorRelease, resolvePins } from "./register.ts";
import {
  clearLeftovers,
  kubeFailure,
  nodeRingsApi,
  supportedArch,
  type ToolRunServiceOptions,
  toolRunContext,
} from "./run-parts.ts";

export interface UpgradeOptions extends ToolRunServiceOptions {
  apiUrl?: string | undefined;
  /** As register's: where NodeRings reaches this cluster's API server (the registration's, to keep Liqo's install the same). */
  apiServerUrl?: string | undefined;
  offline: boolean;
  calicoManifests?: string | undefined;
  operatorChart?: string | undefined;
  /** `plan`: what changes (no call planned); `dry-run`: every call; `run`: the upgrade. */
  mode: "plan" | "dry-run" | "run";
  waitSeconds: number;
  pollMs: number;
  apiTimeoutMs?: number | undefined;
  hostRoot?: string | undefined;
}

/** What `--plan` shows, and `-o json` prints: the pin set, and each component from → to and what restarts. */
export interface UpgradeSummary {
  pins: { name: string; origin: string; hash: string };
  components: UpgradePlan["components"];
  /** The components not touched (their pin did not change, or nr did not install them). */
  untouched: UpgradeComponent[];
}

export type UpgradeOutcome =
  | { kind: "plan"; summary: UpgradeSummary }
  | { kind: "dry-run"; summary: UpgradeSummary; planned: PlannedRun }
  | { kind: "done"; summary: UpgradeSummary; result: RunResult; installedTools: string[] };

const VIOLATION_CODES: Record<SkewViolation["rule"], (typeof errorCodes)[keyof typeof errorCodes]> = {
  unreadable: errorCodes.UPGRADE_VERSION_UNREADABLE,
  downgrade: errorCodes.UPGRADE_DOWNGRADE,
  "k3s-minor-skip": errorCodes.UPGRADE_K3S_MINOR_SKIP,
  "liqoctl-mismatch": errorCodes.UPGRADE_LIQOCTL_MISMATCH,
  "liqo-peering-minor": errorCodes.UPGRADE_LIQO_PEERING_SKEW,
};

/** The register phase of each component, whose checkpoint says what nr installed. */
const INSTALLED_BY: Record<UpgradeComponent, string> = {
  k3s: k3s.id,
  calico: calico.id,
  liqo: liqo.id,
  "proxmox-operator": operator.id,
};

/**
 * `nr cluster upgrade`: reads the registration's state and the new pins, plans which
 * component moves from which version to which (refusing what a skew rule forbids, every
 * refusal at once), then — by `mode` — returns the plan, plans every call, or runs the
 * upgrade: checkpointed in ~/.nr/upgrade-state.json and resumable, under the machine's lock,
 * each component recorded in the registration's state as soon as it is upgraded.
 */
export async function upgrade(options: UpgradeOptions): Promise<UpgradeOutcome> {
  const { env, redactor } = options;
  const paths = nrPaths(env);
  await assertNrHome(paths);
  const registration = createStateStore({ path: paths.state });
  const state = await registration.read(REGISTER_PHASES);
  if (state === undefined) {
    throw new UserError(
      errorCodes.UPGRADE_NOTHING_REGISTERED,
      `nothing to upgrade: no registration is recorded in ${paths.state}`,
      {
        why: "nr cluster upgrade moves what a registration installed to new pins",
        next: "register this machine first: nr cluster register --name NAME (it installs the current pins)",
      },
    );
  }
  if (state.status !== "succeeded") {
    throw new UserError(
      errorCodes.UPGRADE_REGISTRATION_INCOMPLETE,
      `the registration recorded in ${paths.state} is ${state.status}, not succeeded; nothing was done`,
      {
        why: "an upgrade moves a complete registration's components in place; an unfinished one is continued by register",
        next: "finish it with nr cluster register --resume (it installs the new pins' versions where it runs)",
      },
    );
  }
  const config = await loadNrConfig(paths);
  const endpoint = apiEndpoint(
    { apiUrl: options.apiUrl ?? (typeof state.meta.api === "string" ? state.meta.api : undefined) },
    config,
    env,
  );
  if (endpoint.token !== undefined) redactor.add(endpoint.token, "the NodeRings API token");
  const api = nodeRingsApi(endpoint, options);
  const host = createHostFactsSource(options.hostRoot === undefined ? {} : { root: options.hostRoot });
  const facts = await host.facts();
  const arch = supportedArch(facts);
  const pins = await resolvePins(options, config, api, arch);
  const prior = registeredOutputs(state);
  const network = recorded(RecordedNetwork, state.meta.network) ?? {
    podCidr: "10.42.0.0/16",
    serviceCidr: "10.43.0.0/16",
  };

  // What nr installed (the register phases' checkpoints), and where it stands with NodeRings.
  const installed: Partial<Record<UpgradeComponent, string>> = {};
  for (const [component, id] of Object.entries(INSTALLED_BY) as [UpgradeComponent, string][]) {
    const version = state.phases[id]?.state === "done" ? state.phases[id]?.outputs?.version : undefined;
    if (typeof version === "string") installed[component] = version;
  }
  const peered = state.phases[outboundPeer.id]?.state === "done";
  const target = {
    k3s: pins.pins.tools.k3s.version,
    calico: pins.pins.tools.calico.version,
    liqo: pins.pins.tools.liqo.version,
    "proxmox-operator": pins.pins.tools["proxmox-operator"].version,
    liqoctl: pins.pins.tools.liqoctl.version,
  };
  const liqoMinorChanges = installed.liqo !== undefined && minorOf(installed.liqo) !== minorOf(target.liqo);
  const agentId = prior.of(agent)?.agentId;
  const platformLiqo =
    liqoMinorChanges && peered && typeof agentId === "string"
      ? (await api.getPeeringParameters(agentId)).liqoVersion
      : undefined;
  const plan = planUpgrade({ installed, target, peered, platformLiqo });
  refuseViolations(plan.violations);

  const kube = { kubeconfig: typeof state.meta.kubeconfig === "string" ? state.meta.kubeconfig : K3S_KUBECONFIG };
  const installedTools: string[] = [];
  const context = (withPins: ResolvedPins): RegisterContext => ({
    api,
    pins: withPins,
    arch,
    identity: {},
    network,
    apiServer: apiServerOf(options.apiServerUrl, facts.network),
    host,
    skipPrechecks: true,
    ignorePrechecks: [],
    warn: options.warn,
    kube,
    paths,
    runner: options.runner,
    tools: companionTools({ pins: withPins, arch, paths, runner: options.runner, env }),
    calicoManifests: options.calicoManifests ?? calicoManifestsBase(withPins.pins.tools.calico.version),
    offload: [],
    operator: {
      skip: false,
      ...operatorRelease(withPins, options.operatorChart),
      credentialsSource: "the cluster (kept)",
      credentials: () => Promise.reject(new Error("an upgrade reads no Proxmox credentials")),
    },
    ...toolRunContext(options, paths, installedTools),
  });
  const now = context(pins);
  // An upgrade changes versions only: with the installed versions, each component's inputs
  // must be what the registration recorded (same flags, same host), or it would change more.
  assertOnlyVersionsChange(plan, state, prior, context(withVersions(pins, installed)));

  const recordedPins = recorded(RecordedPins, state.meta.pins);
  const summary: UpgradeSummary = {
    pins: { name: pins.pins.name, origin: pins.origin, hash: pins.hash },
    components: plan.components,
    untouched: plan.components.filter((entry) => entry.change !== "upgrade").map((entry) => entry.component),
  };
  if (options.mode === "plan") return { kind: "plan", summary };

  const upgradeContext: UpgradeContext = {
    ...now,
    upgrade: {
      registration,
      prior,
      plan,
      recordedPinsHash: recordedPins?.hash,
      pins: {
        name: pins.pins.name,
        origin: pins.origin,
        source: pins.source,
        hash: pins.hash,
        versions: Object.fromEntries(Object.entries(pins.pins.tools).map(([tool, pin]) => [tool, pin.version])),
      },
    },
  };
  const common = {
    name: "nr cluster upgrade",
    phases: UPGRADE_PHASES,
    context: upgradeContext,
    store: createStateStore({ path: join(paths.home, UPGRADE_STATE) }),
    // An upgrade always continues an earlier one: a component already at its new pin is kept.
    resume: true,
  };
  // The tools the components that move use: found, or planned for download, before anything changes.
  const moving = new Set(plan.components.filter((entry) => entry.change === "upgrade").map((entry) => entry.component));
  if (moving.has("k3s")) await now.tools.k3sInstaller();
  if (moving.has("liqo")) await now.tools.liqoctl();
  if (moving.has("proxmox-operator")) await now.tools.helm();
  if (options.mode === "dry-run") return { kind: "dry-run", summary, planned: await planPhases(common) };

  const result = await runPhases({
    ...common,
    runner: options.planRunner ?? options.runner,
    redactor,
    meta: { from: recordedPins?.name ?? null, to: pins.pins.name },
    lock: { path: nrLockPath(env) },
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    describeFailure: kubeFailure("upgrading", kube.kubeconfig),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    beforeRun: () => clearLeftovers(paths, env, options.warn),
  });
  return { kind: "done", summary, result, installedTools };
}

/** The skew rules' refusals, all at once, under the first one's code. */
function refuseViolations(violations: readonly SkewViolation[]): void {
  const [first] = violations;
  if (first === undefined) return;
  const problems: Problem[] = violations.map((violation) => ({
    severity: "error",
    source: "the new pins",
    path: [violation.component],
    message: describeViolation(violation),
  }));
  throw new UserError(
    VIOLATION_CODES[first.rule],
    violations.length === 1
      ? `${describeViolation(first)}; nothing was done`
      : `${violations.length} skew rules refuse this upgrade; nothing was done`,
    {
      problems: violations.length === 1 ? [] : problems,
      next: violations.flatMap(nextFor),
      facts: { rules: violations.map((violation) => violation.rule).join(",") },
    },
  );
}

function nextFor(violation: SkewViolation): string[] {
  switch (violation.rule) {
    case "downgrade":
    case "unreadable":
      return ["ask NodeRings for the pins this machine should run; nr never moves a component back"];
    case "k3s-minor-skip":
      return [
        `upgrade through each minor version in turn: first to the newest k3s of the minor after ${violation.from}`,
      ];
    case "liqoctl-mismatch":
      return ["the pin set is inconsistent: report it to NodeRings"];
    case "liqo-peering-minor":
      return [
        `wait until NodeRings runs Liqo ${minorOf(violation.to) ?? violation.to}, then run nr cluster upgrade again`,
        "or, to move now: nr cluster reset (unpeers), then nr cluster register with the new pins (a new peering at the new version)",
      ];
  }
}

/** The pins with each installed component at the version it was installed at (and liqoctl at Liqo's). */
function withVersions(pins: ResolvedPins, installed: Partial<Record<UpgradeComponent, string>>): ResolvedPins {
  const copy = structuredClone(pins);
  for (const [component, version] of Object.entries(installed)) {
    const pin = copy.pins.tools[component];
    if (pin !== undefined && version !== undefined) pin.version = version;
  }
  if (installed.liqo !== undefined) copy.pins.tools.liqoctl.version = installed.liqo;
  return copy;
}

/**
 * Each component that moves, and each checkpoint it refreshes, must have been installed with
 * what the upgrade would give it apart from the version: its inputs at the installed version
 * hash to what the registration recorded. Otherwise a flag or the host differs (another
 * --api-server-url, --calico-manifests or --operator-chart) and the upgrade would change it too.
 */
function assertOnlyVersionsChange(
  plan: UpgradePlan,
  state: RunState,
  prior: PriorOutputs,
  before: RegisterContext,
): void {
  const drifted: string[] = [];
  for (const entry of plan.components) {
    if (entry.change !== "upgrade") continue;
    for (const id of REFRESHED[entry.component]) {
      const checkpoint = state.phases[id];
      const phase = REGISTER_PHASES.find((candidate) => candidate.id === id);
      if (checkpoint?.state !== "done" || phase === undefined) continue;
      if (hashInputs(phase.inputs(before, prior)) !== checkpoint.inputsHash) drifted.push(id);
    }
  }
  if (drifted.length === 0) return;
  throw new UserError(
    errorCodes.UPGRADE_INPUTS_CHANGED,
    `what the registration installed ${drifted.join(", ")} with differs from what this upgrade would give besides the version; nothing was done`,
    {
      why: "an upgrade changes versions only; the evidence the registration recorded for these phases names other settings",
      next: [
        "give the upgrade the registration's own --api-server-url, --calico-manifests and --operator-chart",
        "or apply the new settings and pins with nr cluster register --resume (it re-runs what changed, and what follows)",
      ],
      facts: { phases: drifted.join(",") },
    },
  );
}
