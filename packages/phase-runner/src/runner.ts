import { randomUUID } from "node:crypto";
import { BugError, isUserError, UserError } from "@nodekit/errors";
import {
  type ActionHandler,
  createPlan,
  type ExecStep,
  type JsonValue,
  type Plan,
  type PlanEvent,
  type PlanItem,
  runPlan,
} from "@nodekit/plan";
import type { CommandFailedError, ProcessRunner, Redactor } from "@nodekit/process";
import { type Decision, decide, foreseeDecisions, type PhaseObservation, type RunReason } from "./decide.ts";
import { errorCodes } from "./errors.ts";
import { hashInputs } from "./hash.ts";
import { acquireLock, type HeldLock, type LockOptions } from "./lock.ts";
import {
  assertPhaseList,
  contextFor,
  type OutputsOf,
  type Phase,
  type PhaseIo,
  type PhaseOutputs,
  type PlanInput,
  type PriorOutputs,
  type ProbeResult,
} from "./phase.ts";
import { type PhaseSelection, type SelectionLabels, selectPhases } from "./select.ts";
import { emptyState, type PhaseCheckpoint, type RunState, type StateStore, validateOutputs } from "./state.ts";

export interface PhaseRef {
  id: string;
  title: string;
  /** 1-based position in the whole list. */
  index: number;
  total: number;
}

/** Every transition of a run, in order: what a CLI renders as a live list, lines or NDJSON. */
export type PhaseEvent =
  | { type: "run-started"; name: string; runId: string; resume: boolean; phases: number }
  | { type: "phase-skipped"; phase: PhaseRef; reason: string }
  | {
      type: "phase-kept";
      phase: PhaseRef;
      finishedAt: string | undefined;
      /** Why its checkpoint stands: see {@link Decision}. */
      basis: "unchanged" | "selection" | "guard";
      /** For a phase left out by the selection or its guard: why. */
      reason?: string;
    }
  | { type: "phase-started"; phase: PhaseRef; reason: RunReason; detail?: string }
  | { type: "step-started"; phase: PhaseRef; step: number; line: string }
  | { type: "step-finished"; phase: PhaseRef; step: number; line: string; ms: number }
  | { type: "phase-progress"; phase: PhaseRef; detail: string }
  | { type: "checkpoint-written"; phase: PhaseRef; path: string }
  | { type: "phase-finished"; phase: PhaseRef; ms: number }
  | { type: "phase-failed"; phase: PhaseRef; code: string | undefined; message: string }
  | { type: "run-finished"; ran: string[]; kept: string[]; skipped: string[]; ms: number };

interface CommonOptions<Ctx> {
  /** What the run does, e.g. "nr cluster register": in the state and in lock refusals. */
  name: string;
  phases: readonly Phase<Ctx>[];
  context: Ctx;
  store: StateStore;
  /** Continue from the state: completed phases are re-checked with their probe, not redone. */
  resume?: boolean;
  /** Discard an earlier run's state and run every phase again. */
  restart?: boolean;
  selection?: PhaseSelection;
  /** How the selection options are called in messages (a CLI's flags). */
  labels?: SelectionLabels;
  /** How `resume` and `restart` are called in messages (a CLI's flags). */
  resumeLabels?: { resume: string; restart: string };
}

export interface RunPhasesOptions<Ctx> extends CommonOptions<Ctx> {
  /** Runs the plans' exec steps, exactly as planned. */
  runner: ProcessRunner;
  onEvent?: (event: PhaseEvent) => void;
  redactor?: Redactor;
  /** Turns a failed call into the error to report (e.g. @nodekit/kube's kubeToolError). */
  describeFailure?: (error: CommandFailedError, step: ExecStep, item: PlanItem) => UserError | undefined;
  /** The caller's record in the state (pins used, flags), written with the first checkpoint. Never a secret. */
  meta?: Readonly<Record<string, JsonValue>>;
  /** Default: a lock on the state file (`<state>.lock`); `false` runs without one. */
  lock?: boolean | Partial<Omit<LockOptions, "file" | "name" | "runId">>;
  /**
   * Checked before each step: when aborted, the run stops with RUN_INTERRUPTED, or
   * RUN_TERMINATED when the abort's reason is "SIGTERM" (exit 130 or 143, as a shell reports
   * the two); so does a step that fails once it was aborted (the signal stopped it, as Ctrl-C
   * stops the programs of the terminal's process group). The phase and the error are
   * recorded, and the lock released.
   */
  signal?: AbortSignal;
  /**
   * Called once the lock is held, before the state is read: the place to remove what a
   * killed run left behind (a file holding a one-time token, a partial download), which
   * no run can be using while this one holds the lock.
   */
  beforeRun?: () => Promise<void>;
  clock?: () => Date;
  /** A monotonic clock in ms for durations (default performance.now). */
  now?: () => number;
  runId?: string;
}

export interface RunResult {
  state: RunState;
  ran: string[];
  kept: string[];
  skipped: string[];
  /** What was decided for each phase: equal to what `planPhases` says for the same state and selection. */
  decisions: PhaseDecision[];
  /** What each phase recorded (kept or run), typed by the phase: `outputs.of(agent)`. */
  outputs: PriorOutputs;
}

export type PlanPhasesOptions<Ctx> = CommonOptions<Ctx>;

/** A phase's {@link Decision} as a dry run and a run report it. */
export interface PhaseDecision {
  id: string;
  title: string;
  decision: "run" | "kept" | "skipped";
  /** Why: the run reason, the skip reason, or the checkpoint kept. */
  reason: string;
  /** When it runs: why, as a code. */
  runReason?: RunReason;
}

export interface PlannedRun {
  plan: Plan;
  decisions: PhaseDecision[];
}

const RUN_REASON_TEXT: Record<RunReason, string> = {
  new: "not run before",
  "failed-before": "it failed last time",
  "inputs-changed": "its inputs changed since it ran",
  "probe-failed": "its work is no longer in place",
  "after-earlier-rerun": "an earlier phase ran again",
  chosen: "chosen to run",
};

/** The outputs of the phases so far: recorded (kept or run) or, in a dry run, previewed. */
class Outputs implements PriorOutputs {
  private readonly values = new Map<string, { outputs: Partial<PhaseOutputs>; preview: boolean }>();
  /** Why a phase has no outputs: the reason it was skipped. */
  readonly skipped = new Map<string, string>();

  set(id: string, outputs: Partial<PhaseOutputs>, preview = false): void {
    this.values.set(id, { outputs, preview });
  }
  of<Out>(phase: OutputsOf<Out>): Partial<Out> | undefined;
  of(id: string): PhaseOutputs | undefined;
  of(phase: OutputsOf<unknown> | string): unknown {
    return this.values.get(idOf(phase))?.outputs;
  }
  recorded<Out>(phase: OutputsOf<Out>): Out | undefined;
  recorded(phase: OutputsOf<unknown>): unknown {
    const entry = this.values.get(phase.id);
    return entry === undefined || entry.preview ? undefined : entry.outputs;
  }
  require<Out, K extends keyof Out & string>(phase: OutputsOf<Out>, key: K): Out[K];
  require(id: string, key: string): JsonValue;
  require(phase: OutputsOf<unknown> | string, key: string): unknown {
    const id = idOf(phase);
    const entry = this.values.get(id);
    const value = entry?.outputs[key];
    if (value !== undefined) return value;
    const skipped = this.skipped.get(id);
    throw new UserError(
      errorCodes.PHASE_OUTPUT_MISSING,
      `phase ${id} has no recorded ${key}, which a later phase needs`,
      {
        why: entry?.preview
          ? `phase ${id} would run first in this run, and its ${key} is known only then`
          : skipped === undefined
            ? `phase ${id} has not run`
            : `phase ${id} was skipped: ${skipped}`,
        next: `run phase ${id} first`,
        facts: { phase: id, output: key },
      },
    );
  }
  known<Out, K extends keyof Out & string>(phase: OutputsOf<Out>, key: K): Out[K] | undefined;
  known(id: string, key: string): JsonValue | undefined;
  known(phase: OutputsOf<unknown> | string, key: string): unknown {
    const entry = this.values.get(idOf(phase));
    return entry?.preview ? entry.outputs[key] : this.require(idOf(phase), key);
  }
}

const idOf = (phase: OutputsOf<unknown> | string) => (typeof phase === "string" ? phase : phase.id);

interface Loaded {
  state: RunState | undefined;
  /** Whether the earlier checkpoints count (resume, or a from/only selection). */
  useState: boolean;
}

async function loadForRun<Ctx>(options: CommonOptions<Ctx>): Promise<Loaded> {
  return admit(options, await options.store.read(options.phases));
}

/**
 * Whether a run may start on this state, and whether its checkpoints count: refuses an
 * earlier run's state without resume or restart, restart with a chosen phase, and a chosen
 * phase whose earlier phases are not done.
 */
function admit<Ctx>(options: CommonOptions<Ctx>, state: RunState | undefined): Loaded {
  const ids = options.phases.map((entry) => entry.id);
  const labels = options.resumeLabels ?? { resume: "resume", restart: "restart" };
  const selecting = options.selection?.from !== undefined || options.selection?.only !== undefined;
  if (options.restart) {
    if (selecting) {
      throw new UserError(errorCodes.PHASE_SELECTION_CONFLICT, `${labels.restart} runs every phase`, {
        why: "it discards the recorded phases, which the phase chosen to start from (or run alone) needs",
        next: `leave out ${labels.restart}, or the phase chosen`,
      });
    }
    return { state: undefined, useState: false };
  }
  const recorded = state === undefined ? [] : Object.keys(state.phases);
  if (state !== undefined && recorded.length > 0 && !options.resume && !selecting) {
    const done = ids.filter((id) => state.phases[id]?.state === "done");
    throw new UserError(
      errorCodes.RUN_STATE_EXISTS,
      `an earlier run of ${options.name} left its state in ${options.store.path} (${state.status}${done.length > 0 ? `; done: ${done.join(", ")}` : ""})`,
      {
        why: "a new run would not know which of its changes are already in place",
        next: [
          `continue it with ${labels.resume} (completed phases are re-checked, not redone)`,
          `or run every phase again with ${labels.restart}`,
        ],
        facts: { stateFile: options.store.path, status: state.status },
      },
    );
  }
  if (selecting) {
    const chosen = options.selection?.only ?? options.selection?.from ?? "";
    const skip = options.selection?.skip ?? [];
    const missing = options.phases.slice(0, ids.indexOf(chosen)).filter((entry) => {
      if (skip.includes(entry.id) || entry.guard?.(contextFor(entry, options.context)) !== undefined) return false;
      const recorded = state?.phases[entry.id]?.state;
      return recorded !== "done" && recorded !== "skipped";
    });
    if (missing.length > 0) {
      const names = missing.map((entry) => entry.id);
      throw new UserError(
        errorCodes.PHASE_PREREQUISITE_MISSING,
        `phase ${chosen} needs ${names.join(", ")} done first, and the state does not record ${names.length === 1 ? "it" : "them"} as done`,
        {
          why: "a phase builds on the phases before it (their outputs, what they installed)",
          next: `start from ${names[0]} instead`,
          facts: { phase: chosen, stateFile: options.store.path },
        },
      );
    }
  }
  return { state, useState: options.resume === true || selecting };
}

function refOf<Ctx>(phases: readonly Phase<Ctx>[], index: number): PhaseRef {
  const entry = phases[index];
  if (entry === undefined) throw new BugError(`no phase at ${index}`);
  return { id: entry.id, title: entry.title, index: index + 1, total: phases.length };
}

/** One phase as the walk hands it to a run or a dry run, with its decision. */
interface Turn<Ctx> {
  entry: Phase<Ctx>;
  index: number;
  ref: PhaseRef;
  context: Ctx;
  decision: Exclude<Decision, { action: "observe" }>;
  /** Its checkpoint, when the state counts. */
  checkpoint: PhaseCheckpoint | undefined;
  /** The hash of its inputs, for a phase that runs. */
  inputsHash: string | undefined;
}

/**
 * The one walk over the phases that the run and the dry run share: for each phase in order,
 * `decide()` says what it needs to know (guard, inputs, probe), the walk observes exactly
 * that, and hands the decision to `act` (which runs, plans, keeps or skips it) before the
 * next phase is decided — a later phase's inputs read what the earlier ones recorded.
 */
async function walkPhases<Ctx>(
  options: CommonOptions<Ctx>,
  counted: RunState | undefined,
  prior: Outputs,
  act: (turn: Turn<Ctx>) => Promise<void>,
): Promise<PhaseDecision[]> {
  const { phases } = options;
  const selection = { ...options.selection, labels: options.labels };
  const observations = new Map<string, PhaseObservation>();
  const described: PhaseDecision[] = [];
  for (const [index, entry] of phases.entries()) {
    const context = contextFor(entry, options.context);
    const checkpoint = counted?.phases[entry.id];
    let decision = decide(phases, counted, selection, observations)[index];
    while (decision?.action === "observe") {
      const seen = observations.get(entry.id);
      if (decision.need === "guard" || seen === undefined) {
        observations.set(entry.id, { guard: entry.guard?.(context) });
      } else if (decision.need === "inputs") {
        seen.inputsHash = hashInputs(entry.inputs(context, prior));
      } else {
        seen.probe = await runProbe(entry, context, checkpoint?.outputs ?? {}, prior);
      }
      decision = decide(phases, counted, selection, observations)[index];
    }
    if (decision === undefined) throw new BugError(`no decision for phase ${entry.id}`);
    described.push(describeDecision(entry, decision, checkpoint));
    const inputsHash = observations.get(entry.id)?.inputsHash;
    await act({ entry, index, ref: refOf(phases, index), context, decision, checkpoint, inputsHash });
  }
  return described;
}

function describeDecision<Ctx>(
  entry: Phase<Ctx>,
  decision: Exclude<Decision, { action: "observe" }>,
  checkpoint: PhaseCheckpoint | undefined,
): PhaseDecision {
  const base = { id: entry.id, title: entry.title };
  if (decision.action === "run") {
    return { ...base, decision: "run", reason: RUN_REASON_TEXT[decision.reason], runReason: decision.reason };
  }
  if (decision.action === "skip") {
    return {
      ...base,
      decision: "skipped",
      reason: decision.by === "guard" ? `skipped: ${decision.reason}` : decision.reason,
    };
  }
  const at = `done at ${checkpoint?.finishedAt ?? "?"}`;
  if (decision.basis === "unchanged")
    return { ...base, decision: "kept", reason: `kept: ${at}, inputs unchanged, still in place` };
  const stale = checkpoint?.state === "stale" ? " (an earlier phase ran again since)" : "";
  return { ...base, decision: "kept", reason: `kept: ${at}${stale}, not run now: ${decision.reason ?? ""}` };
}

/** For a phase a run leaves out: why the later phases find no outputs of it. */
function skipWhy(decision: Extract<Decision, { action: "skip" }>, checkpoint: PhaseCheckpoint | undefined) {
  if (decision.record) return decision.reason;
  return checkpoint?.state === "skipped" ? (checkpoint.reason ?? "skipped") : undefined;
}

/**
 * Runs the phases in order, checkpointing each one after its work succeeded. With
 * `resume`, a completed phase whose inputs are unchanged and whose probe passes is kept;
 * the first one that has to run again makes every phase after it run again (see
 * `decide()`). Holds a lock on the state for the whole run. A failure is recorded (phase
 * failed, last error) and thrown with `facts.phase`.
 */
export async function runPhases<Ctx>(options: RunPhasesOptions<Ctx>): Promise<RunResult> {
  const { phases, store } = options;
  assertPhaseList(phases);
  const clock = options.clock ?? (() => new Date());
  const now = options.now ?? (() => performance.now());
  const emit = options.onEvent ?? (() => {});
  const runId = options.runId ?? randomUUID();
  selectPhases(phases, options.selection ?? {}, options.labels);
  const started = now();

  let compromised: Error | undefined;
  let lock: HeldLock | undefined;
  if (options.lock !== false) {
    lock = await acquireLock({
      ...(typeof options.lock === "object" ? options.lock : {}),
      file: store.path,
      name: options.name,
      runId,
      onCompromised: (error) => {
        compromised = error;
      },
    });
  }
  try {
    await options.beforeRun?.();
    const loaded = await loadForRun(options);
    const previous = loaded.state;
    const state: RunState =
      previous === undefined
        ? emptyState(options.name, runId, clock())
        : { ...previous, runId, status: "running", phases: { ...previous.phases } };
    state.meta = { ...state.meta, ...options.meta };
    const save = async () => {
      if (compromised !== undefined) {
        throw new UserError(errorCodes.RUN_LOCK_COMPROMISED, `the lock on ${store.path} was lost during the run`, {
          why: `${compromised.message}; another process may have removed or taken it`,
          next: "check that no other run is in progress, then resume",
          facts: { stateFile: store.path },
        });
      }
      state.updatedAt = clock().toISOString();
      await store.write(state);
    };
    await save();
    emit({ type: "run-started", name: options.name, runId, resume: loaded.useState, phases: phases.length });

    const outputs = new Outputs();
    const ran: string[] = [];
    const kept: string[] = [];
    const skipped: string[] = [];

    // Decided on the state as it was read: what this run writes into it is not evidence.
    const counted = loaded.useState ? previous : undefined;
    const decisions = await walkPhases(options, counted, outputs, async (turn) => {
      const { entry, index, ref, context, decision, checkpoint } = turn;
      if (decision.action === "keep") {
        if (checkpoint?.outputs !== undefined) outputs.set(entry.id, checkpoint.outputs);
        kept.push(entry.id);
        emit({
          type: "phase-kept",
          phase: ref,
          finishedAt: checkpoint?.finishedAt,
          basis: decision.basis,
          ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        });
        return;
      }
      if (decision.action === "skip") {
        const why = skipWhy(decision, checkpoint);
        if (why !== undefined) outputs.skipped.set(entry.id, why);
        // Recorded with the next write: a skip changes nothing on the machine.
        if (decision.record) {
          state.phases[entry.id] = {
            state: "skipped",
            reason: decision.reason,
            runs: state.phases[entry.id]?.runs ?? 0,
          };
        }
        skipped.push(entry.id);
        emit({ type: "phase-skipped", phase: ref, reason: decision.reason });
        return;
      }
      const inputsHash = turn.inputsHash;
      if (inputsHash === undefined) throw new BugError(`phase ${entry.id} runs without its inputs' hash`);
      emit({
        type: "phase-started",
        phase: ref,
        reason: decision.reason,
        ...(decision.detail === undefined ? {} : { detail: decision.detail }),
      });
      const phaseStarted = now();
      const runs = (state.phases[entry.id]?.runs ?? 0) + 1;
      const startedAt = clock().toISOString();
      // Nothing is written when a phase starts: one write per phase, its checkpoint. A run
      // killed meanwhile leaves the run "running" with no lock held, which status reads as
      // interrupted, and this phase without a checkpoint of this run.
      try {
        const produced = await executePhase(entry, context, outputs, ref, options, emit);
        const ms = now() - phaseStarted;
        const done: PhaseCheckpoint = {
          state: "done",
          startedAt,
          finishedAt: clock().toISOString(),
          ms: Math.round(ms),
          inputsHash,
          outputs: produced,
          runs,
        };
        state.phases[entry.id] = done;
        if (entry.invalidatesLater !== false && decision.reason !== "probe-failed") {
          // The phases after this one ran on what it did before: they run again, and the
          // state says so in the same write, so a run killed before them still redoes them.
          // (A phase redone because its work was gone did nothing new: see decide().)
          for (const later of phases.slice(index + 1)) {
            const record = state.phases[later.id];
            if (record?.state === "done") state.phases[later.id] = { ...record, state: "stale" };
          }
        }
        await save();
        outputs.set(entry.id, produced);
        emit({ type: "checkpoint-written", phase: ref, path: store.path });
        emit({ type: "phase-finished", phase: ref, ms });
        ran.push(entry.id);
      } catch (error) {
        const failure = phaseFailure(error, entry, store.path);
        const code = isUserError(failure) ? failure.code : "INTERNAL";
        state.phases[entry.id] = {
          state: "failed",
          startedAt,
          finishedAt: clock().toISOString(),
          runs,
          error: { code, message: failure.message },
        };
        state.status =
          isUserError(failure) &&
          (failure.code === errorCodes.RUN_INTERRUPTED.code || failure.code === errorCodes.RUN_TERMINATED.code)
            ? "interrupted"
            : "failed";
        state.lastError = { code, message: failure.message, phase: entry.id, at: clock().toISOString() };
        emit({ type: "phase-failed", phase: ref, code, message: failure.message });
        await save().catch(() => {});
        throw failure;
      }
    });
    state.status = "succeeded";
    delete state.lastError;
    await save();
    emit({ type: "run-finished", ran, kept, skipped, ms: now() - started });
    return { state, ran, kept, skipped, decisions, outputs };
  } finally {
    await lock?.release();
  }
}

async function runProbe<Ctx>(
  entry: Phase<Ctx>,
  context: Ctx,
  outputs: PhaseOutputs,
  prior: PriorOutputs,
): Promise<ProbeResult> {
  if (entry.probe === undefined) return { ok: true };
  try {
    return await entry.probe(context, outputs, prior);
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

async function executePhase<Ctx>(
  entry: Phase<Ctx>,
  context: Ctx,
  prior: PriorOutputs,
  ref: PhaseRef,
  options: RunPhasesOptions<Ctx>,
  emit: (event: PhaseEvent) => void,
): Promise<PhaseOutputs> {
  const observation = entry.observe === undefined ? undefined : await entry.observe(context, prior);
  const input: PlanInput = { prior, observation, dryRun: false };
  const steps = entry.plan(context, input);
  const produced: Record<string, JsonValue> = {};
  const io: PhaseIo = {
    phaseId: entry.id,
    prior,
    observation,
    set: (key, value) => {
      produced[key] = value;
    },
    get: (key) => produced[key],
    report: (detail) => emit({ type: "phase-progress", phase: ref, detail }),
    signal: options.signal,
  };
  const code = (reason: unknown = options.signal?.reason) =>
    reason === "SIGTERM" ? errorCodes.RUN_TERMINATED : errorCodes.RUN_INTERRUPTED;
  const interrupted = () =>
    new UserError(
      code(),
      `${code() === errorCodes.RUN_TERMINATED ? "stopped" : "interrupted"} during phase ${entry.id}`,
      {
        why: "the run was asked to stop; the step that was running finished first",
        next: "resume to continue from this phase",
        facts: { phase: entry.id },
      },
    );
  const check = () => {
    if (options.signal?.aborted) throw interrupted();
  };
  /**
   * A step's failure once the run was asked to stop: the stop's (the signal stopped the step, or
   * the step saw it). A program the same Ctrl-C killed counts too, even before this process's
   * own handler has run: the terminal signals the whole process group at once, and the child's
   * exit can be seen first.
   */
  const stopped = (error: unknown): unknown => {
    const killed = killedBySignal(error);
    const reason = options.signal?.aborted ? options.signal.reason : killed?.signal;
    if (reason === undefined) return error;
    const stop = code(reason);
    if (
      isUserError(error) &&
      (error.code === errorCodes.RUN_INTERRUPTED.code || error.code === errorCodes.RUN_TERMINATED.code)
    ) {
      return error.code === stop.code
        ? error
        : new UserError(stop, error.message, { why: error.why, next: error.next, facts: error.facts, cause: error });
    }
    return new UserError(
      stop,
      `${stop === errorCodes.RUN_TERMINATED ? "stopped" : "interrupted"} during phase ${entry.id}: its step stopped`,
      {
        why: `the run was asked to stop, and the step that was running ended with it (${(killed ?? error) instanceof Error ? (killed ?? (error as Error)).message : String(error)})`,
        next: "resume to run this phase again",
        facts: { phase: entry.id },
        cause: error,
      },
    );
  };
  check();
  const actions: Record<string, ActionHandler> = {};
  for (const [name, handler] of Object.entries(entry.actions ?? {})) {
    actions[name] = async (step) => {
      check();
      await handler(context, step, io);
    };
  }
  const runner: ProcessRunner = {
    run: (call, runOptions) => {
      check();
      return options.runner.run(call, runOptions);
    },
  };
  const plan = createPlan(entry.id, [{ id: entry.id, title: entry.title, steps }]);
  const forward = (event: PlanEvent) => {
    if (event.type === "step-started") emit({ type: "step-started", phase: ref, step: event.step, line: event.line });
    if (event.type === "step-finished")
      emit({ type: "step-finished", phase: ref, step: event.step, line: event.line, ms: event.ms });
  };
  try {
    await runPlan(plan, {
      runner,
      actions,
      onEvent: forward,
      ...(options.redactor === undefined ? {} : { redactor: options.redactor }),
      ...(options.describeFailure === undefined ? {} : { describeFailure: options.describeFailure }),
    });
  } catch (error) {
    throw stopped(error);
  } finally {
    await entry.cleanup?.(context, io).catch(() => {});
  }
  // What is written is what a later read accepts: the phase's own schema checks it first.
  return validateOutputs(entry, { ...entry.recorded?.(context, input), ...produced });
}

function phaseFailure<Ctx>(error: unknown, entry: Phase<Ctx>, stateFile: string): Error {
  if (!isUserError(error)) return error instanceof Error ? error : new Error(String(error));
  const message = error.message.startsWith(`${entry.id}: `) ? error.message : `${entry.id}: ${error.message}`;
  return new UserError(error.errorCode, message, {
    why: error.why,
    problems: error.problems,
    facts: { ...error.facts, phase: entry.id, stateFile },
    cause: error,
  });
}

/**
 * What a run would do, without doing it: the same decisions (`decide()`, through the walk
 * the run takes: skipped, kept after the probe, run and why), and for each phase that would
 * run its observations and the exact steps of its plan. Takes no lock and writes nothing;
 * refuses exactly where a real run would (an earlier state without resume, an unknown phase).
 */
export async function planPhases<Ctx>(options: PlanPhasesOptions<Ctx>): Promise<PlannedRun> {
  assertPhaseList(options.phases);
  selectPhases(options.phases, options.selection ?? {}, options.labels);
  const loaded = await loadForRun(options);
  const outputs = new Outputs();
  const items: PlanItem[] = [];
  const counted = loaded.useState ? loaded.state : undefined;
  const decisions = await walkPhases(options, counted, outputs, async (turn) => {
    const { entry, context, decision, checkpoint } = turn;
    const described = (reason: string) => `${entry.title} (${reason})`;
    if (decision.action === "keep") {
      if (checkpoint?.outputs !== undefined) outputs.set(entry.id, checkpoint.outputs);
      items.push({ id: entry.id, title: described(describeDecision(entry, decision, checkpoint).reason), steps: [] });
      return;
    }
    if (decision.action === "skip") {
      const why = skipWhy(decision, checkpoint);
      if (why !== undefined) outputs.skipped.set(entry.id, why);
      items.push({ id: entry.id, title: described(describeDecision(entry, decision, checkpoint).reason), steps: [] });
      return;
    }
    const observation = entry.observe === undefined ? undefined : await entry.observe(context, outputs);
    const input: PlanInput = { prior: outputs, observation, dryRun: true };
    items.push({ id: entry.id, title: entry.title, steps: entry.plan(context, input) });
    outputs.set(entry.id, { ...entry.preview?.(context, input) }, true);
  });
  const observations: Record<string, JsonValue> = {
    phases: decisions.map((d) => ({ id: d.id, decision: d.decision, reason: d.reason })),
  };
  return { plan: createPlan(options.name, items, observations), decisions };
}

/**
 * What a run with these options would do on `state`, before it runs or asks anything:
 * `decide()` with each phase's guard, taking every done phase as still in place with its
 * inputs unchanged (nothing is probed; a probe that fails later runs that phase too).
 * Refuses where the run would. For what to prepare only for the phases that will run (the
 * tools they use, the secrets they write).
 */
export function foreseeRun<Ctx>(options: PlanPhasesOptions<Ctx>, state: RunState | undefined): Decision[] {
  assertPhaseList(options.phases);
  selectPhases(options.phases, options.selection ?? {}, options.labels);
  const loaded = admit(options, state);
  const guards = new Map(options.phases.map((entry) => [entry.id, entry.guard?.(contextFor(entry, options.context))]));
  return foreseeDecisions(
    options.phases,
    loaded.useState ? loaded.state : undefined,
    { ...options.selection, labels: options.labels },
    guards,
  );
}

/** The program the step ran, when SIGINT or SIGTERM ended it (the error or one of its causes). */
function killedBySignal(error: unknown): (Error & { signal: "SIGINT" | "SIGTERM" }) | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth++) {
    const signal = (cause as Partial<CommandFailedError>).signal;
    if (signal === "SIGINT" || signal === "SIGTERM") return cause as Error & { signal: typeof signal };
  }
  return undefined;
}
