import { BugError } from "@nodekit/errors";
import type { ActionStep, JsonValue, PlanStep } from "@nodekit/plan";
import type * as z from "zod";

/** A phase's results, recorded in its checkpoint and handed to the phases after it. */
export type PhaseOutputs = Readonly<Record<string, JsonValue>>;

/**
 * How a phase's recorded outputs are checked when a state is read (and before its
 * checkpoint is written): a zod schema over what the state file holds. A transform or a
 * default in it migrates what an older version recorded.
 */
export type OutputsSchema<Out> = z.ZodType<Out>;

declare const outputsType: unique symbol;

/**
 * A phase as the phases after it name it: `prior.require(agent, "agentId")` is typed by
 * what `agent` records. Only the type is carried; nothing is stored under the symbol.
 */
export interface OutputsOf<Out> {
  readonly id: string;
  readonly [outputsType]?: Out;
}

/** The outputs of the phases before this one (from this run, or from their checkpoints). */
export interface PriorOutputs {
  /**
   * What phase `phase` recorded, or undefined when it has nothing (skipped, not run). In a
   * dry run, a phase that would run first gives its preview: only what is known before it runs.
   */
  of<Out>(phase: OutputsOf<Out>): Partial<Out> | undefined;
  of(id: string): PhaseOutputs | undefined;
  /**
   * What phase `phase` recorded — kept from its checkpoint or run in this run — or undefined
   * when it has not (skipped, not run, or in a dry run only previewed).
   */
  recorded<Out>(phase: OutputsOf<Out>): Out | undefined;
  /** One output of an earlier phase; PHASE_OUTPUT_MISSING when that phase has not recorded it. */
  require<Out, K extends keyof Out & string>(phase: OutputsOf<Out>, key: K): Out[K];
  require(id: string, key: string): JsonValue;
  /**
   * Like `require`, for planning: in a dry run, undefined when the phase would run first and
   * learns the value only then (the id of an agent it creates). In a run, exactly `require`.
   */
  known<Out, K extends keyof Out & string>(phase: OutputsOf<Out>, key: K): Out[K] | undefined;
  known(id: string, key: string): JsonValue | undefined;
}

/** What an action handler of a phase gets: the earlier phases' outputs and a place to put its own. */
export interface PhaseIo<Obs = unknown, Out = PhaseOutputs> {
  readonly phaseId: string;
  readonly prior: PriorOutputs;
  /** What `observe` returned for this phase. */
  readonly observation: Obs;
  /** Record an output of this phase (agent id, cluster id, …): it goes into the checkpoint. */
  set<K extends keyof Out & string>(key: K, value: Out[K]): void;
  /** An output set earlier in this phase. */
  get<K extends keyof Out & string>(key: K): Out[K] | undefined;
  /** Progress detail for the current step (shown beside the phase, never a secret). */
  report(detail: string): void;
  readonly signal: AbortSignal | undefined;
}

export interface PlanInput<Obs = unknown> {
  readonly prior: PriorOutputs;
  /** What `observe` returned. */
  readonly observation: Obs;
  /** True when planning a dry run: earlier phases' outputs may be previews rather than real. */
  readonly dryRun: boolean;
}

export type ProbeResult = { ok: true } | { ok: false; reason: string };

export type ActionHandlerOf<Ctx, Obs = unknown, Out = PhaseOutputs> = (
  context: Ctx,
  step: ActionStep,
  io: PhaseIo<Obs, Out>,
) => Promise<void>;

/**
 * One phase, as data. The runner calls, in order: `guard` (does it run at all?), `inputs`
 * (hashed into the checkpoint: a change re-runs it on resume), then — when it has to run —
 * `observe` (read-only, in dry runs too), `plan` (the exact steps) and the steps themselves
 * (exec steps through the run's process runner, action steps through `actions`). A
 * checkpoint is written only after every step succeeded. On resume, a completed phase is
 * re-checked with `probe` instead of being run again. Which of these happens is decided by
 * `decide()`, the same for a run, a dry run and status.
 *
 * `Obs` is what `observe` returns and `plan` and the actions get; `Out` is what the phase
 * records (its `outputs` schema). `needs` names the parts of the run's context the phase
 * receives; it sees nothing else.
 */
export interface Phase<Ctx, Obs = unknown, Out = PhaseOutputs> {
  /** Stable id: what the skip/from/only options, the state file and status name. Lower-case words. */
  readonly id: string;
  readonly title: string;
  /** One line for help text. */
  readonly description?: string;
  /** The context keys this phase is given (it is given only those). */
  readonly needs: readonly (keyof Ctx)[];
  /**
   * What the phase records, checked on every read of the state (a checkpoint that does not
   * match is RUN_STATE_INVALID, located) and before its checkpoint is written. Without one,
   * any JSON object is accepted.
   */
  readonly outputs?: OutputsSchema<Out>;
  /** A reason to skip the phase in this run (`"--skip-prechecks"`), or undefined to run it. */
  guard?(context: Ctx): string | undefined;
  /** What the phase's work depends on (versions, digests, flags, earlier outputs); hashed into its checkpoint. */
  inputs(context: Ctx, prior: PriorOutputs): JsonValue;
  /** Read-only look at the world before planning (host facts, what exists already). Runs in dry runs too. */
  observe?(context: Ctx, prior: PriorOutputs): Promise<Obs>;
  /** The exact steps the phase takes: what a dry run prints and a real run executes. */
  plan(context: Ctx, input: PlanInput<Obs>): readonly PlanStep[];
  /**
   * The outputs a phase records that its plan already decided (a node name, a version):
   * for phases whose steps are calls only. Merged under what its actions set.
   */
  recorded?(context: Ctx, input: PlanInput<Obs>): Partial<Out>;
  /** Handlers for the plan's action steps, by action name. */
  readonly actions?: Readonly<Record<string, ActionHandlerOf<Ctx, Obs, Out>>>;
  /**
   * Runs after the phase's steps, whether they succeeded or not: removes what must not
   * outlive the phase (a file holding a one-time token). Its own failure is ignored.
   */
  cleanup?(context: Ctx, io: PhaseIo<Obs, Out>): Promise<void>;
  /** In a dry run, the outputs later phases plan with when this phase would run: only what is known before it runs. */
  preview?(context: Ctx, input: PlanInput<Obs>): Partial<Out>;
  /** A cheap check, on resume, that a completed phase's work is still in place; given what it recorded. */
  probe?(context: Ctx, outputs: Out, prior: PriorOutputs): Promise<ProbeResult>;
  /**
   * Whether running this phase again forces the phases after it to run again (default true).
   * A read-only phase (a precheck) sets false.
   */
  readonly invalidatesLater?: boolean;
}

/** A phase defined with {@link phase}: one entry of the run's list, and a typed name for what it records. */
export type DefinedPhase<Ctx, Out = PhaseOutputs> = Phase<Ctx> & OutputsOf<Out>;

/**
 * A typed phase builder: `phase<Ctx>()({ needs: ["api", "pins"], ... })` gives the phase's
 * functions a context of only those keys (`Pick<Ctx, "api" | "pins">`), an observation of
 * what its `observe` returns and outputs of what its `outputs` schema reads, and returns an
 * entry for the run's list that later phases name to read its outputs, typed.
 */
export function phase<Ctx>() {
  return <K extends keyof Ctx, Obs = undefined, Out = PhaseOutputs>(
    definition: Phase<Pick<Ctx, K>, Obs, Out> & { readonly needs: readonly K[] },
  ): DefinedPhase<Ctx, Out> =>
    // The runner hands each function exactly the context keys, observation and outputs it
    // declared (contextFor, observe, the validated checkpoint): the list only forgets them.
    definition as unknown as DefinedPhase<Ctx, Out>;
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
