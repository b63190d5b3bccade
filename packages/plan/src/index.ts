export { errorCodes as planErrorCodes } from "./errors.ts";
export { formatPlan, formatStep, planCallLines, planDocument } from "./format.ts";
export {
  type ActionStep,
  action,
  createPlan,
  type ExecStep,
  exec,
  type JsonValue,
  PLAN_API_VERSION,
  type Plan,
  type PlanItem,
  type PlannedCall,
  type PlanStep,
  splitAt,
} from "./plan.ts";
export {
  type ActionHandler,
  type ItemRef,
  type PlanEvent,
  type PlanRunResult,
  planFrom,
  type RunPlanOptions,
  runPlan,
  unknownItem,
} from "./run.ts";
