import { type DecidedPhase, foreseeDecisions } from "./decide.ts";
import type { LockInspection } from "./lock.ts";
import type { RunState, RunStatus } from "./state.ts";

/** A phase as status shows it. `running`: the first phase without a checkpoint while a run holds the lock. */
export type PhaseStatusState = "pending" | "running" | "done" | "stale" | "skipped" | "failed";

export interface PhaseStatusRow {
  id: string;
  title: string;
  state: PhaseStatusState;
  startedAt?: string;
  finishedAt?: string;
  ms?: number;
  /** Why it was skipped, or its error message. */
  detail?: string;
  errorCode?: string;
  runs: number;
}

export interface RunStatusReport {
  /** `none`: no state yet. `interrupted`: the state says running, but no run holds the lock. */
  status: RunStatus | "none";
  phases: PhaseStatusRow[];
  /**
   * The first phase a resume would run (`decide()` on this state, taking each done phase as
   * still in place and each skipped one as skipped again): the first not done or skipped.
   */
  next: string | undefined;
  lastError: RunState["lastError"];
  updatedAt: string | undefined;
}

/**
 * Where a run stands, phase by phase, in the list's order — from the state (or none) and,
 * when given, what the lock says (a "running" state whose run holds no lock was interrupted).
 */
export function runStatus(
  phases: readonly (DecidedPhase & { readonly title: string })[],
  state: RunState | undefined,
  lock?: LockInspection,
): RunStatusReport {
  const live = lock?.state === "held";
  const rows = phases.map((entry): PhaseStatusRow => {
    const checkpoint = state?.phases[entry.id];
    if (checkpoint === undefined) return { id: entry.id, title: entry.title, state: "pending", runs: 0 };
    const stateOf: PhaseStatusState = checkpoint.state;
    const detail = checkpoint.state === "skipped" ? checkpoint.reason : checkpoint.error?.message;
    return {
      id: entry.id,
      title: entry.title,
      state: stateOf,
      runs: checkpoint.runs,
      ...(checkpoint.startedAt === undefined ? {} : { startedAt: checkpoint.startedAt }),
      ...(checkpoint.finishedAt === undefined ? {} : { finishedAt: checkpoint.finishedAt }),
      ...(checkpoint.ms === undefined ? {} : { ms: checkpoint.ms }),
      ...(detail === undefined ? {} : { detail }),
      ...(checkpoint.error === undefined ? {} : { errorCode: checkpoint.error.code }),
    };
  });
  let status: RunStatusReport["status"] = state === undefined ? "none" : state.status;
  if (status === "running" && !live) status = "interrupted";
  const first = foreseeDecisions(phases, state).find((decision) => decision.action === "run");
  const next = rows.find((row) => row.id === first?.id);
  if (status === "running" && next !== undefined && next.state === "pending") next.state = "running";
  return {
    status,
    phases: rows,
    next: next?.id,
    lastError: state?.lastError,
    updatedAt: state?.updatedAt,
  };
}
