import type { ProbeResult } from "./phase.ts";
import { type PhaseSelection, type SelectionLabels, selectPhases } from "./select.ts";
import type { PhaseCheckpoint, RunState } from "./state.ts";

/** Why a phase runs in this invocation. */
export type RunReason = "new" | "failed-before" | "inputs-changed" | "probe-failed" | "after-earlier-rerun" | "chosen";

/** What a phase's decision needs to know of it: its id, and whether running it again re-runs the later ones. */
export interface DecidedPhase {
  readonly id: string;
  readonly invalidatesLater?: boolean | undefined;
}

/**
 * What was learned about one phase before deciding, gathered in order and only as far as
 * its decision needs: its guard always; then the hash of its inputs (for every phase that
 * the selection and the guard leave in: its checkpoint needs it too); then, only for a
 * done phase whose inputs are unchanged and after which nothing ran again, its probe.
 */
export interface PhaseObservation {
  /** The guard's reason to skip it in this run, or undefined to run it. */
  guard: string | undefined;
  /** The hash of its inputs now. */
  inputsHash?: string | undefined;
  /** Whether its work is still in place. */
  probe?: ProbeResult | undefined;
}

/** Which phases a run takes, and how the caller's options are called in the reasons. */
export interface DecideSelection extends PhaseSelection {
  labels?: SelectionLabels | undefined;
}

/**
 * One phase's decision.
 *
 * - `run`, and why.
 * - `keep`: its checkpoint stands and later phases read its outputs — because its inputs are
 *   unchanged and its probe passed (`unchanged`), or because this run leaves it out
 *   (`selection`, a done phase) or its guard does (`guard`, a done or stale phase: skipping a
 *   phase now does not undo what an earlier run did).
 * - `skip`: it does not run and records nothing; `record` says the state records the skip
 *   (a phase the caller skips, or its guard skips), not when it is only outside a
 *   from/only selection.
 * - `observe`: the decision needs one more fact about it first (its guard, its inputs'
 *   hash, its probe); the decisions stop here.
 */
export type Decision =
  | { id: string; action: "run"; reason: RunReason; detail?: string }
  | { id: string; action: "keep"; basis: "unchanged" | "selection" | "guard"; reason?: string }
  | { id: string; action: "skip"; by: "selection" | "guard"; reason: string; record: boolean }
  | { id: string; action: "observe"; need: "guard" | "inputs" | "probe" };

/**
 * The one decision of what a run does with each phase — run it (and why), keep its
 * checkpoint, or skip it — from the phases in order, the state whose checkpoints count
 * (undefined when none do: a fresh run, `restart`), the selection, and what was observed of
 * each phase so far. Pure: the run, the dry run and status all call it, so they cannot
 * disagree. Decides in order and stops at the first phase that needs another observation
 * (`observe`), whose answer may depend on what the phases before it did; the decisions
 * before that one do not change when observations are added. An unknown or contradictory
 * selection is PHASE_UNKNOWN or PHASE_SELECTION_CONFLICT.
 */
export function decide(
  phases: readonly DecidedPhase[],
  state: RunState | undefined,
  selection: DecideSelection,
  observations: ReadonlyMap<string, PhaseObservation>,
): Decision[] {
  const excluded = selectPhases(phases, selection, selection.labels);
  const ids = phases.map((entry) => entry.id);
  const fromIndex = selection.from === undefined ? 0 : ids.indexOf(selection.from);
  const decisions: Decision[] = [];
  let dirty = false;
  for (const [index, entry] of phases.entries()) {
    const { id } = entry;
    const checkpoint: PhaseCheckpoint | undefined = state?.phases[id];
    const exclusion = excluded.get(id);
    if (exclusion !== undefined) {
      if (checkpoint?.state === "done") decisions.push({ id, action: "keep", basis: "selection", reason: exclusion });
      else {
        // Left out by the skip list (not by from/only): the state records the skip.
        const record = selection.only === undefined && index >= fromIndex;
        decisions.push({ id, action: "skip", by: "selection", reason: exclusion, record });
      }
      continue;
    }
    const seen = observations.get(id);
    if (seen === undefined) {
      decisions.push({ id, action: "observe", need: "guard" });
      break;
    }
    if (seen.guard !== undefined) {
      if (checkpoint?.state === "done" || checkpoint?.state === "stale") {
        decisions.push({ id, action: "keep", basis: "guard", reason: seen.guard });
      } else decisions.push({ id, action: "skip", by: "guard", reason: seen.guard, record: true });
      continue;
    }
    if (seen.inputsHash === undefined) {
      decisions.push({ id, action: "observe", need: "inputs" });
      break;
    }
    let run: Extract<Decision, { action: "run" }> | undefined;
    if (id === selection.from || id === selection.only) run = { id, action: "run", reason: "chosen" };
    else if (checkpoint === undefined || checkpoint.state === "skipped") run = { id, action: "run", reason: "new" };
    else if (checkpoint.state === "failed") run = { id, action: "run", reason: "failed-before" };
    else if (dirty || checkpoint.state === "stale") run = { id, action: "run", reason: "after-earlier-rerun" };
    else if (checkpoint.inputsHash !== seen.inputsHash) run = { id, action: "run", reason: "inputs-changed" };
    else if (seen.probe === undefined) {
      decisions.push({ id, action: "observe", need: "probe" });
      break;
    } else if (!seen.probe.ok) run = { id, action: "run", reason: "probe-failed", detail: seen.probe.reason };
    if (run === undefined) {
      decisions.push({ id, action: "keep", basis: "unchanged" });
      continue;
    }
    decisions.push(run);
    if (entry.invalidatesLater !== false) dirty = true;
  }
  return decisions;
}

/**
 * What a `resume` would do with the state as it stands, assuming each phase is still in
 * place and its inputs unchanged, and each phase skipped before is skipped again (the same
 * flags): status's "next", and a caller's guess of which phases will run before it asks
 * anything (a guard given in `guards` replaces the recorded skip). Nothing is probed.
 */
export function foreseeDecisions(
  phases: readonly DecidedPhase[],
  state: RunState | undefined,
  selection: DecideSelection = {},
  guards?: ReadonlyMap<string, string | undefined>,
): Decision[] {
  const observations = new Map<string, PhaseObservation>();
  for (const entry of phases) {
    const checkpoint = state?.phases[entry.id];
    const recordedSkip = checkpoint?.state === "skipped" ? (checkpoint.reason ?? "skipped") : undefined;
    observations.set(entry.id, {
      guard: guards === undefined ? recordedSkip : guards.get(entry.id),
      // Unchanged: a checkpoint's own hash, or any hash for a phase without one (it runs anyway).
      inputsHash: checkpoint?.inputsHash ?? "unknown",
      probe: { ok: true },
    });
  }
  return decide(phases, state, selection, observations);
}
