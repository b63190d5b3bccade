import { BugError } from "@nodekit/errors";
import type { CommandCall } from "@nodekit/process";

/** The version of the plan document (`-o json`); a change that breaks readers bumps it. */
export const PLAN_API_VERSION = "plan.nodekit.dev/v1";

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** One program call, exactly as a real run executes it. */
export interface PlannedCall extends CommandCall {
  /** Whether the call changes anything (false for `kubectl get`, `helm template`, `kubectl wait`). */
  mutates: boolean;
  /** Files the call reads (charts, values files, manifests), so a reader of the plan sees every input. */
  reads?: readonly string[];
}

export interface ExecStep {
  kind: "exec";
  call: PlannedCall;
}

/**
 * Work done in-process rather than by a program (an HTTP request to a service, a download
 * checked against a digest, a file written): printed as a `# comment` line in a dry run,
 * carried out by the handler registered for `action` in a real run.
 */
export interface ActionStep {
  kind: "action";
  action: string;
  /** One line for people, e.g. "download helm v3.19.0 (linux/amd64) into ~/.nr/bin, sha256 4f2a…". */
  summary: string;
  mutates: boolean;
  /** What the handler needs, as data (shown in `-o json`); never a secret in clear. */
  params?: Readonly<Record<string, JsonValue>>;
}

export type PlanStep = ExecStep | ActionStep;

export interface PlanItem {
  /** Stable id: what `--from-item` names and what progress and errors show. */
  id: string;
  title: string;
  steps: readonly PlanStep[];
}

export interface Plan {
  apiVersion: typeof PLAN_API_VERSION;
  kind: "Plan";
  /** What the plan does, e.g. "install the NVKE controller stack on site lab". */
  name: string;
  /** What read-only observations decided (node architecture, pins, …), as shown in `-o json`. */
  observations: Readonly<Record<string, JsonValue>>;
  items: readonly PlanItem[];
}

const ID = /^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?$/;

/**
 * A plan from its items. Item ids must be unique and lower-case words (`cert-manager`,
 * `deploy/spire`): a duplicate or malformed id is a bug in the planner (BugError).
 */
export function createPlan(
  name: string,
  items: readonly PlanItem[],
  observations: Readonly<Record<string, JsonValue>> = {},
): Plan {
  const seen = new Set<string>();
  for (const item of items) {
    if (!ID.test(item.id)) throw new BugError(`plan item id ${JSON.stringify(item.id)} is not a lower-case word`);
    if (seen.has(item.id)) throw new BugError(`plan item id ${JSON.stringify(item.id)} is used twice`);
    seen.add(item.id);
  }
  return { apiVersion: PLAN_API_VERSION, kind: "Plan", name, observations, items };
}

/** An exec step; `mutates` must be said, because a dry-run reader needs to know. */
export function exec(call: CommandCall, options: { mutates: boolean; reads?: readonly string[] }): ExecStep {
  return {
    kind: "exec",
    call: { ...call, mutates: options.mutates, ...(options.reads === undefined ? {} : { reads: options.reads }) },
  };
}

export function action(
  name: string,
  summary: string,
  options: { mutates: boolean; params?: Readonly<Record<string, JsonValue>> },
): ActionStep {
  return {
    kind: "action",
    action: name,
    summary,
    mutates: options.mutates,
    ...(options.params === undefined ? {} : { params: options.params }),
  };
}

/** The items from `fromItem` on (all when undefined), and those skipped before it; undefined when it is unknown. */
export function splitAt(
  plan: Plan,
  fromItem: string | undefined,
): { skipped: readonly PlanItem[]; run: readonly PlanItem[] } | undefined {
  if (fromItem === undefined) return { skipped: [], run: plan.items };
  const index = plan.items.findIndex((item) => item.id === fromItem);
  if (index === -1) return undefined;
  return { skipped: plan.items.slice(0, index), run: plan.items.slice(index) };
}
