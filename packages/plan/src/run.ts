import { BugError, isUserError, UserError } from "@nodekit/errors";
import { CommandFailedError, type ProcessRunner, type Redactor } from "@nodekit/process";
import { errorCodes } from "./errors.ts";
import { formatStep } from "./format.ts";
import { type ActionStep, type ExecStep, type Plan, type PlanItem, splitAt } from "./plan.ts";

export interface ItemRef {
  id: string;
  title: string;
  /** 1-based position in the whole plan. */
  index: number;
  total: number;
}

/** What the runner tells its caller, in order; the CLI renders these (a live list, lines, NDJSON). */
export type PlanEvent =
  | { type: "plan-started"; plan: string; items: number; from?: string }
  | { type: "item-skipped"; item: ItemRef; reason: string }
  | { type: "item-started"; item: ItemRef }
  | { type: "step-started"; item: ItemRef; step: number; line: string }
  | { type: "step-finished"; item: ItemRef; step: number; line: string; ms: number }
  | { type: "item-finished"; item: ItemRef; ms: number }
  | { type: "item-failed"; item: ItemRef; step: number; line: string; message: string }
  | { type: "plan-finished"; ran: number; skipped: number; ms: number };

export type ActionHandler = (step: ActionStep, item: PlanItem) => Promise<void>;

export interface RunPlanOptions {
  /** Runs the exec steps; every call goes through it exactly as the plan holds it. */
  runner: ProcessRunner;
  /** One handler per action name the plan uses. */
  actions?: Readonly<Record<string, ActionHandler>>;
  /** Start at this item (the ones before it are reported skipped); PLAN_ITEM_UNKNOWN when the plan has none. */
  fromItem?: string | undefined;
  onEvent?: (event: PlanEvent) => void;
  /** Redacts the lines in events and errors. */
  redactor?: Redactor;
  /**
   * Turns a failed call into the error to report, e.g. @nodekit/kube's kubeToolError for
   * kubectl/helm/clusterctl (unreachable, forbidden, …). Return undefined for the default:
   * PLAN_STEP_FAILED with the program's own last lines.
   */
  describeFailure?: (error: CommandFailedError, step: ExecStep, item: PlanItem) => UserError | undefined;
  now?: () => number;
}

export interface PlanRunResult {
  ran: readonly string[];
  skipped: readonly string[];
}

/** PLAN_ITEM_UNKNOWN for a `--from-item` the plan does not have, listing the ones it has. */
export function unknownItem(plan: Plan, fromItem: string): UserError {
  return new UserError(errorCodes.PLAN_ITEM_UNKNOWN, `the plan has no item ${JSON.stringify(fromItem)}`, {
    why: `its items are, in order: ${plan.items.map((item) => item.id).join(", ")}`,
    facts: { item: fromItem },
  });
}

/**
 * Executes exactly the plan, item by item and step by step, in order. Stops at the first
 * failure with a user error naming the item and the call (its code is that of the
 * underlying failure when it has one, so the exit code says what kind of failure it was;
 * `facts.planItem` names the item to resume from). Items before `fromItem` are skipped.
 */
export async function runPlan(plan: Plan, options: RunPlanOptions): Promise<PlanRunResult> {
  const now = options.now ?? (() => performance.now());
  const emit = options.onEvent ?? (() => {});
  const split = splitAt(plan, options.fromItem);
  if (split === undefined) throw unknownItem(plan, options.fromItem ?? "");
  const started = now();
  const total = plan.items.length;
  const ref = (item: PlanItem): ItemRef => ({
    id: item.id,
    title: item.title,
    index: plan.items.indexOf(item) + 1,
    total,
  });
  emit({
    type: "plan-started",
    plan: plan.name,
    items: total,
    ...(options.fromItem === undefined ? {} : { from: options.fromItem }),
  });
  for (const item of split.skipped) {
    emit({ type: "item-skipped", item: ref(item), reason: `before --from-item ${options.fromItem}` });
  }
  for (const item of split.run) {
    const itemStarted = now();
    emit({ type: "item-started", item: ref(item) });
    for (const [index, step] of item.steps.entries()) {
      const line = formatStep(step, options.redactor);
      const stepStarted = now();
      emit({ type: "step-started", item: ref(item), step: index + 1, line });
      try {
        if (step.kind === "exec") {
          await options.runner.run(step.call);
        } else {
          const handler = options.actions?.[step.action];
          if (handler === undefined) throw new BugError(`no handler for plan action ${JSON.stringify(step.action)}`);
          await handler(step, item);
        }
      } catch (error) {
        const failure = stepFailure(error, step, item, line, options);
        emit({ type: "item-failed", item: ref(item), step: index + 1, line, message: failure.message });
        throw failure;
      }
      emit({ type: "step-finished", item: ref(item), step: index + 1, line, ms: now() - stepStarted });
    }
    emit({ type: "item-finished", item: ref(item), ms: now() - itemStarted });
  }
  emit({ type: "plan-finished", ran: split.run.length, skipped: split.skipped.length, ms: now() - started });
  return { ran: split.run.map((item) => item.id), skipped: split.skipped.map((item) => item.id) };
}

function stepFailure(
  error: unknown,
  step: ExecStep | ActionStep,
  item: PlanItem,
  line: string,
  options: RunPlanOptions,
): Error {
  if (error instanceof BugError) return error;
  const facts = { planItem: item.id, planStep: line };
  let described: unknown = error;
  if (error instanceof CommandFailedError && step.kind === "exec") {
    described = options.describeFailure?.(error, step, item) ?? error;
  }
  if (isUserError(described)) {
    return new UserError(described.errorCode, `${item.id}: ${described.message}`, {
      why: described.why,
      next: described.next,
      problems: described.problems,
      facts: { ...described.facts, ...facts },
      cause: described,
    });
  }
  if (described instanceof CommandFailedError || step.kind === "exec") {
    const reason = described instanceof Error ? described.message : String(described);
    return new UserError(errorCodes.PLAN_STEP_FAILED, `${item.id} (${item.title}) failed`, {
      why: `${line} failed: ${reason}`,
      facts,
      cause: described,
    });
  }
  return described instanceof Error ? described : new Error(String(described));
}

/**
 * The plan as a run from `fromItem` executes it, for a dry run to print: the items before it
 * keep their place (and their number) with no steps, their titles saying they are skipped;
 * the rest as they are. PLAN_ITEM_UNKNOWN for an item the plan does not have, as runPlan.
 */
export function planFrom(plan: Plan, fromItem: string | undefined): Plan {
  const split = splitAt(plan, fromItem);
  if (split === undefined) throw unknownItem(plan, fromItem ?? "");
  if (split.skipped.length === 0) return plan;
  return {
    ...plan,
    items: [
      ...split.skipped.map((item) => ({
        ...item,
        title: `${item.title} (skipped: before --from-item ${fromItem})`,
        steps: [],
      })),
      ...split.run,
    ],
  };
}
