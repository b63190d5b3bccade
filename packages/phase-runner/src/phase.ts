import { BugError } from "@nodekit/errors";
import type { ActionStep, JsonValue, PlanStep } from "@nodekit/plan";
import type { PhaseCheckpoint } from "./state.ts";

/** A phase's results, recorded in its checkpoint and handed to the phases after it. */
export type PhaseOutputs = Readonly<Record<string, JsonValue>>;

/** The outputs of the phases before this one (from this run, or from their checkpoints). */
export interface PriorOutputs {
  /** The outputs of phase `id`, or undefined when it has none (skipped, not run). */
  of(id: string): PhaseOutputs | undefined;
  /** One output of an earlier phase; PHASE_OUTPUT_MISSING when that phase has not recorded it. */
  require(id: string, key: string): JsonValue;
}

/** What an action handler of a phase gets: the earlier phases' outputs and a place to put its own. */
export interface PhaseIo {
  readonly phaseId: string;
  readonly prior: PriorOutputs;
  /** What `observe` returned for this phase. */
  readonly observation: JsonValue | undefined;
  /** Record an output of this phase (agent id, cluster id, …): it goes into the checkpoint. */
  set(key: string, value: JsonValue): void;
  /** An output set earlier in this phase. */
  get(key: string): JsonValue | undefined;
  /** Progress detail for the current step (shown beside the phase, never a secret). */
  report(detail: string): void;
  readonly signal: AbortSignal | undefined;
}

export interface PlanInput {
  readonly prior: PriorOutputs;
  /** What `observe` returned. */
  readonly observation: JsonValue | undefined;
  /** True when planning a dry run: earlier phases' outputs may be previews rather than real. */
  readonly dryRun: boolean;
}

export type ProbeResult = { ok: true } | { ok: false; reason: string };

export type ActionHandlerOf<Ctx> = (context: Ctx, step: ActionStep, io: PhaseIo) => Promise<void>;

/**
 * One phase, as data. The runner calls, in order: `guard` (does it run at all?), `inputs`
 * (hashed into the checkpoint: a change re-runs it on resume), then — when it has to run —
 * `observe` (read-only, in dry runs too), `plan` (the exact steps) and the steps themselves
 * (exec steps through the run's process runner, action steps through `actions`). A
 * checkpoint is written only after every step succeeded. On resume, a completed phase is
 * re-checked with `probe` instead of being run again.
 *
 * `needs` names the parts of the run's context the phase receives; it sees nothing else.
 */
export interface Phase<Ctx> {
  /** Stable id: what the skip/from/only options, the state file and status name. Lower-case words. */
  readonly id: string;
  readonly title: string;
  /** One line for help text. */
  readonly description?: string;
  /** The context keys this phase is given (it is given only those). */
  readonly needs: readonly (keyof Ctx)[];
  /** A reason to skip the phase in this run (`"--skip-prechecks"`), or undefined to run it. */
  guard?(context: Ctx): string | undefined;
  /** What the phase's work depends on (versions, digests, flags, earlier outputs); hashed into its checkpoint. */
  inputs(context: Ctx, prior: PriorOutputs): JsonValue;
  /** Read-only look at the world before planning (host facts, what exists already). Runs in dry runs too. */
  observe?(context: Ctx, prior: PriorOutputs): Promise<JsonValue>;
  /** The exact steps the phase takes: what a dry run prints and a real run executes. */
  plan(context: Ctx, input: PlanInput): readonly PlanStep[];
  /**
   * The outputs a phase records that its plan already decided (a node name, a version):
   * for phases whose steps are calls only. Merged under what its actions set.
   */
  outputs?(context: Ctx, input: PlanInput): PhaseOutputs;
  /** Handlers for the plan's action steps, by action name. */
  readonly actions?: Readonly<Record<string, ActionHandlerOf<Ctx>>>;
  /**
   * Runs after the phase's steps, whether they succeeded or not: removes what must not
   * outlive the phase (a file holding a one-time token). Its own failure is ignored.
   */
  cleanup?(context: Ctx, io: PhaseIo): Promise<void>;
  /** In a dry run, the outputs later phases plan with when this phase would run (ids not known yet, say so). */
  preview?(context: Ctx, input: PlanInput): PhaseOutputs;
  /** A cheap check, on resume, that a completed phase's work is still in place. */
  probe?(context: Ctx, checkpoint: PhaseCheckpoint, prior: PriorOutputs): Promise<ProbeResult>;
  /**
   * Whether running this phase again forces the phases after it to run again (default true).
   * A read-only phase (a precheck) sets false.
   */
  readonly invalidatesLater?: boolean;
}

/**
 * A typed phase builder: `phase<Ctx>()({ needs: ["api", "pins"], ... })` gives the phase's
 * functions a context of only those keys (`Pick<Ctx, "api" | "pins">`) and returns a
 * `Phase<Ctx>` for the run's list.
 */
export function phase<Ctx>() {
  return <K extends keyof Ctx>(definition: Phase<Pick<Ctx, K>> & { readonly needs: readonly K[] }): Phase<Ctx> =>
    definition as unknown as Phase<Ctx>;
}

const ID = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** Checks a phase list: ids unique and lower-case words. A bad list is a bug in the caller (BugError). */
export function assertPhaseList<Ctx>(phases: readonly Phase<Ctx>[]): void {
  if (phases.length === 0) throw new BugError("a run needs at least one phase");
  const seen = new Set<string>();
  for (const entry of phases) {
    if (!ID.test(entry.id)) throw new BugError(`phase id ${JSON.stringify(entry.id)} is not a lower-case word`);
    if (seen.has(entry.id)) throw new BugError(`phase id ${JSON.stringify(entry.id)} is used twice`);
    seen.add(entry.id);
  }
}

/** Only the keys a phase needs: what it is handed. */
export function contextFor<Ctx>(entry: Phase<Ctx>, context: Ctx): Ctx {
  const picked: Partial<Ctx> = {};
  for (const key of entry.needs) picked[key] = context[key];
  return picked as Ctx;
}

/**
 * The phases as help text: `  1. agent        Agent record: create or reuse the agent`, one
 * line each, in order — the same list that drives the run.
 */
export function describePhases<Ctx>(phases: readonly Phase<Ctx>[]): string {
  const width = Math.max(...phases.map((entry) => entry.id.length));
  const number = String(phases.length).length;
  return phases
    .map(
      (entry, index) =>
        `${String(index + 1).padStart(number)}. ${entry.id.padEnd(width)}  ${entry.title}${entry.description ? `: ${entry.description}` : ""}`,
    )
    .join("\n");
}
