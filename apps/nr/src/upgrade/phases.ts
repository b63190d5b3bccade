import { BugError, UserError } from "@nodekit/errors";
import {
  type ActionHandlerOf,
  hashInputs,
  type Phase,
  type PhaseIo,
  type PhaseOutputs,
  type PlanInput,
  phase,
} from "@nodekit/phase-runner";
import { type ActionStep, action, type JsonValue, type PlanStep } from "@nodekit/plan";
import { errorCodes } from "../errors.ts";
import type { RegisterPhase } from "../register/context.ts";
import { RecordedPins, recorded } from "../register/meta.ts";
import { calico } from "../register/phases/calico.ts";
import { installToolAction, toolSteps } from "../register/phases/common.ts";
import { k3s } from "../register/phases/k3s.ts";
import { liqo } from "../register/phases/liqo.ts";
import { operator, operatorHelmStep } from "../register/phases/operator.ts";
import { outboundPeer } from "../register/phases/outbound-peer.ts";
import { REGISTER_PHASES } from "../register/phases.ts";
import { displayPath } from "../services/home.ts";
import type { ToolDecision } from "../services/tools.ts";
import type { UpgradeContext } from "./context.ts";
import { type ComponentPlan, PIN_TOOLS } from "./plan.ts";
import type { UpgradeComponent } from "./skew.ts";

// The phases of `nr cluster upgrade`: one per component, in a safe order (k3s, then Calico,
// then Liqo with liqoctl, then the operator), each the register phase's own plan run again
// with the new pin, in place, then one step that records the new version in the
// registration's state. A component whose pin did not change is not touched (its guard), so
// a k3s upgrade never re-runs Calico, Liqo or the peerings. Last, the new pin set is recorded.

/**
 * The registration's checkpoints an upgraded component refreshes: its own phase (new version,
 * new evidence), and the phases whose inputs name its version but whose work an in-place
 * upgrade keeps — the outbound peering names Liqo's version (NodeRings' record of it), and a
 * patch or same-minor upgrade of Liqo keeps the peering. Their evidence is rehashed so that
 * `nr cluster register --resume` with the new pins keeps them instead of peering again.
 * upgrade/phases.test.ts holds this list to the register phases' inputs.
 */
export const REFRESHED: Record<UpgradeComponent, readonly string[]> = {
  k3s: [k3s.id],
  calico: [calico.id],
  liqo: [liqo.id, outboundPeer.id],
  "proxmox-operator": [operator.id],
};

const define = phase<UpgradeContext>();

const registerPhase = (id: string): RegisterPhase<unknown> => {
  const found = REGISTER_PHASES.find((entry) => entry.id === id);
  if (found === undefined) throw new BugError(`no register phase ${id}`);
  return found;
};

function planned(ctx: Pick<UpgradeContext, "upgrade">, component: UpgradeComponent): ComponentPlan {
  const found = ctx.upgrade.plan.components.find((entry) => entry.component === component);
  if (found === undefined) throw new BugError(`no plan for ${component}`);
  return found;
}

/** Why a component is not touched by this upgrade, or undefined when it is upgraded. */
function untouched(ctx: Pick<UpgradeContext, "upgrade">, component: UpgradeComponent): string | undefined {
  const entry = planned(ctx, component);
  if (entry.change === "upgrade") return undefined;
  return entry.change === "unchanged"
    ? `${component} ${entry.to}: its pin did not change, not touched`
    : `nr did not install ${component} (nr cluster register --resume installs it at the new pin)`;
}

/** The register phase's input for planning: the registration's outputs, not the upgrade's own. */
const onRegistration = <Obs>(ctx: UpgradeContext, input: PlanInput<Obs>): PlanInput<Obs> => ({
  ...input,
  prior: ctx.upgrade.prior,
});

/**
 * Records the upgraded component in the registration's state, under the lock the upgrade
 * holds: its phase's checkpoint (new evidence, new outputs, one more run) and the evidence of
 * the phases it refreshes ({@link REFRESHED}), and its versions in the recorded pins. Read
 * fresh and written atomically, as the phase runner writes it.
 */
async function recordUpgrade(
  ctx: UpgradeContext,
  component: UpgradeComponent,
  outputs: PhaseOutputs,
  startedAt: string,
): Promise<void> {
  const state = await ctx.upgrade.registration.read(REGISTER_PHASES);
  if (state === undefined) {
    throw new UserError(errorCodes.UPGRADE_NOTHING_REGISTERED, "the registration's state is gone", {
      why: `${ctx.upgrade.registration.path} was removed while the upgrade ran`,
      next: "see what happened with nr cluster status",
    });
  }
  const now = ctx.clock().toISOString();
  const [own, ...kept] = REFRESHED[component];
  for (const id of [own, ...kept]) {
    const checkpoint = state.phases[id ?? ""];
    if (id === undefined || checkpoint === undefined) continue;
    const entry = registerPhase(id);
    const inputsHash = hashInputs(entry.inputs(ctx, ctx.upgrade.prior));
    state.phases[id] =
      id === own
        ? {
            ...checkpoint,
            state: "done",
            startedAt,
            finishedAt: now,
            inputsHash,
            outputs: (entry.outputs?.parse(outputs) ?? outputs) as PhaseOutputs,
            runs: checkpoint.runs + 1,
          }
        : { ...checkpoint, inputsHash };
  }
  const pins = recorded(RecordedPins, state.meta.pins);
  if (pins !== undefined) {
    const versions = { ...pins.versions };
    for (const tool of PIN_TOOLS[component]) {
      const version = ctx.upgrade.pins.versions[tool];
      if (version !== undefined) versions[tool] = version;
    }
    state.meta.pins = { ...pins, versions };
  }
  state.updatedAt = now;
  await ctx.upgrade.registration.write(state);
}

function recordStep(ctx: UpgradeContext, component: UpgradeComponent): ActionStep {
  const ids = REFRESHED[component];
  return action(
    "record-upgrade",
    `record ${component} ${planned(ctx, component).to} in ${displayPath(ctx.upgrade.registration.path)}: the ${ids.join(" and ")} checkpoint${ids.length === 1 ? "" : "s"} (what nr cluster status shows, and what nr cluster register --resume keeps)`,
    { mutates: true },
  );
}

/** What the upgrade phase of one component does besides what its register phase does. */
interface ComponentSteps {
  /** What it does, for help: when its pin moved, … */
  description: string;
  observe?: (ctx: UpgradeContext) => Promise<unknown>;
  plan?: (ctx: UpgradeContext, input: PlanInput) => readonly PlanStep[];
  recorded?: (ctx: UpgradeContext, input: PlanInput) => PhaseOutputs;
  actions?: Record<string, ActionHandlerOf<UpgradeContext>>;
}

/**
 * One component's upgrade phase: the register phase `base` (its observation, plan, actions
 * and what it records) on the registration's outputs, guarded by the plan (a component whose
 * pin did not change is skipped), and followed by the step that records the new version.
 */
function componentPhase(component: UpgradeComponent, base: RegisterPhase<unknown>, own: ComponentSteps) {
  const needs = new Set<keyof UpgradeContext>(["upgrade", "clock"]);
  for (const id of REFRESHED[component]) for (const key of registerPhase(id).needs) needs.add(key);
  // When the component's work began: its observation, run just before its steps.
  const started = new WeakMap<object, string>();
  const observe = async (ctx: UpgradeContext) => {
    started.set(ctx, ctx.clock().toISOString());
    return own.observe !== undefined ? own.observe(ctx) : await base.observe?.(ctx, ctx.upgrade.prior);
  };
  const recorded = (ctx: UpgradeContext, input: PlanInput): PhaseOutputs =>
    own.recorded?.(ctx, input) ?? (base.recorded?.(ctx, onRegistration(ctx, input)) as PhaseOutputs | undefined) ?? {};
  const baseActions =
    own.actions ?? (base.actions as Record<string, ActionHandlerOf<UpgradeContext>> | undefined) ?? {};
  const actions: Record<string, ActionHandlerOf<UpgradeContext>> = {};
  for (const [name, handler] of Object.entries(baseActions)) {
    actions[name] = async (ctx, step, io) => {
      await handler(ctx, step, { ...io, prior: ctx.upgrade.prior } as PhaseIo);
    };
  }
  actions["record-upgrade"] = async (ctx, _step, io) => {
    const input: PlanInput = { prior: ctx.upgrade.prior, observation: io.observation, dryRun: false };
    const set: Record<string, JsonValue> = {};
    for (const key of ["installed"]) {
      const value = io.get(key);
      if (value !== undefined) set[key] = value;
    }
    await recordUpgrade(
      ctx,
      component,
      { ...recorded(ctx, input), ...set },
      started.get(ctx) ?? ctx.clock().toISOString(),
    );
  };
  const definition: Phase<UpgradeContext, unknown, PhaseOutputs> = {
    id: base.id,
    title: base.title,
    description: `when its pin moved, ${own.description}`,
    needs: [...needs],
    ...(base.outputs === undefined ? {} : { outputs: base.outputs as Phase<UpgradeContext>["outputs"] }),
    guard: (ctx) => untouched(ctx, component),
    inputs: (ctx) => {
      const entry = planned(ctx, component);
      return { component, from: entry.from ?? null, to: entry.to, register: base.inputs(ctx, ctx.upgrade.prior) };
    },
    observe,
    plan: (ctx, input) => [
      ...(own.plan?.(ctx, input) ?? base.plan(ctx, onRegistration(ctx, input))),
      recordStep(ctx, component),
    ],
    recorded,
    actions,
    ...(base.cleanup === undefined
      ? {}
      : {
          cleanup: (ctx: UpgradeContext, io: PhaseIo) =>
            base.cleanup?.(ctx, { ...io, prior: ctx.upgrade.prior } as PhaseIo) ?? Promise.resolve(),
        }),
  };
  return define(definition as Phase<Pick<UpgradeContext, keyof UpgradeContext>> & { needs: (keyof UpgradeContext)[] });
}

/**
 * k3s: the installer again with the flags the registration ran it with and the new
 * INSTALL_K3S_VERSION ("re-run the installation script with the same configuration options
 * you originally used", docs.k3s.io/upgrades/manual), on the node name it recorded — not
 * the hostname now, which would register another node.
 */
const k3sUpgrade = componentPhase("k3s", k3s, {
  description:
    "re-run the k3s installer with the registration's flags and the new version, on the node it recorded; wait for its API and node",
  observe: async (ctx) => ({
    ...((await k3s.observe?.(ctx, ctx.upgrade.prior)) as object),
    nodeName: ctx.upgrade.prior.require(k3s, "nodeName"),
  }),
});

/** Calico: the new release's operator manifests, applied server-side over the old (Calico's operator upgrade). */
const calicoUpgrade = componentPhase("calico", calico, {
  description:
    "apply the new release's tigera operator manifests server-side; wait until Calico is Available and the node Ready",
});

/** Liqo: liqoctl at the new version (downloaded and checked when needed), `liqoctl install` upgrading the release. */
const liqoUpgrade = componentPhase("liqo", liqo, {
  description:
    "upgrade the liqo release with liqoctl at the new version (liqoctl install --version), the registration's flags kept; the peering is kept",
});

/**
 * The operator: `helm upgrade` of its release at the new chart version. The credentials
 * Secret is in the cluster and is kept: the upgrade reads no credentials.
 */
const operatorUpgrade = componentPhase("proxmox-operator", operator, {
  description: "helm upgrade the proxmox-operator release to the new chart version; its credentials Secret is kept",
  observe: async (ctx) => ({ helm: await ctx.tools.helm() }),
  plan: (ctx, { observation }) => {
    const { helm } = observation as { helm: ToolDecision };
    return [...toolSteps(helm, "helm"), operatorHelmStep(ctx, helm.path)];
  },
  recorded: (ctx) => {
    const { installed: _installed, ...before } = ctx.upgrade.prior.recorded(operator) ?? {};
    return { ...before, version: ctx.operator.version } as PhaseOutputs;
  },
  actions: {
    "install-tool": async (ctx, _step, io) =>
      installToolAction(
        ctx,
        (io.observation as { helm: ToolDecision }).helm,
        io as PhaseIo<unknown, { installed?: string }>,
      ),
  },
});

/** Last: the new pin set is the registration's (its name and hash in nr cluster status). */
const recordPins = define({
  id: "pins",
  title: "Pins",
  description: "record the new pin set as the registration's",
  needs: ["upgrade", "pins"],
  guard: (ctx) =>
    ctx.upgrade.recordedPinsHash === ctx.pins.hash
      ? `the registration records pin set ${ctx.pins.pins.name} already`
      : undefined,
  inputs: (ctx) => ({ hash: ctx.pins.hash }),
  plan: (ctx) => [
    action(
      "record-pins",
      `record pin set ${ctx.pins.pins.name} (${ctx.pins.origin}) as the registration's pins in ${displayPath(ctx.upgrade.registration.path)}`,
      { mutates: true },
    ),
  ],
  actions: {
    "record-pins": async (ctx) => {
      const state = await ctx.upgrade.registration.read(REGISTER_PHASES);
      if (state === undefined) return;
      state.meta.pins = ctx.upgrade.pins;
      await ctx.upgrade.registration.write(state);
    },
  },
});

/** The upgrade's own checkpoints, beside the registration's in ~/.nr (nr cluster status reads them). */
export const UPGRADE_STATE = "upgrade-state.json";

/** The upgrade's phases, in its order: what the run, the dry run and help take. */
export const UPGRADE_PHASES: readonly Phase<UpgradeContext>[] = [
  k3sUpgrade,
  calicoUpgrade,
  liqoUpgrade,
  operatorUpgrade,
  recordPins,
];
