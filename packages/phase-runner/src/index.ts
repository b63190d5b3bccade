export {
  type DecidedPhase,
  type DecideSelection,
  type Decision,
  decide,
  foreseeDecisions,
  type PhaseObservation,
  type RunReason,
} from "./decide.ts";
export { errorCodes as phaseRunnerErrorCodes } from "./errors.ts";
export { canonicalJson, hashInputs } from "./hash.ts";
export {
  acquireLock,
  breakStaleLock,
  type HeldLock,
  inspectLock,
  type LockInspection,
  type LockOptions,
  type LockOwner,
  lockPathOf,
} from "./lock.ts";
export {
  type ActionHandlerOf,
  assertPhaseList,
  type DefinedPhase,
  describePhases,
  type OutputsOf,
  type OutputsSchema,
  type Phase,
  type PhaseIo,
  type PhaseOutputs,
  type PlanInput,
  type PriorOutputs,
  type ProbeResult,
  phase,
} from "./phase.ts";
export {
  foreseeRun,
  type PhaseDecision,
  type PhaseEvent,
  type PhaseRef,
  type PlannedRun,
  type PlanPhasesOptions,
  planPhases,
  type RunPhasesOptions,
  type RunResult,
  runPhases,
} from "./runner.ts";
export { type PhaseSelection, type Selected, type SelectionLabels, selectPhases } from "./select.ts";
export {
  type AtomicWrite,
  createStateStore,
  type PhaseCheckpoint,
  PhaseCheckpointSchema,
  type PhaseState,
  parseState,
  type RunState,
  RunStateSchema,
  type RunStatus,
  STATE_API_VERSION,
  type StatePhase,
  type StateStore,
  type StateStoreOptions,
} from "./state.ts";
export { type PhaseStatusRow, type PhaseStatusState, type RunStatusReport, runStatus } from "./status.ts";
