import { type CommandCall, formatCall, REDACTED, type Redactor } from "@nodekit/process";
import type { JsonValue, Plan, PlanStep } from "./plan.ts";

const redact = (text: string, redactor: Redactor | undefined) => (redactor ? redactor.redact(text) : text);

/** The one line a step prints: the exact, redacted shell line of a call, or `# summary` for an action. */
export function formatStep(step: PlanStep, redactor?: Redactor): string {
  if (step.kind === "exec") return formatCall(step.call, redactor);
  return `# ${redact(step.summary, redactor)}`;
}

/**
 * The plan as a dry run prints it: for each item a `# [n/total] id: title` comment, then
 * one copy-pasteable line per call, in order, exactly what a real run executes (redacted),
 * and `# …` lines for the actions done in-process. Pasted into a shell, the comments are
 * inert and the calls run as the tool would run them.
 */
export function formatPlan(plan: Plan, options: { redactor?: Redactor } = {}): string {
  const lines: string[] = [`# ${redact(plan.name, options.redactor)}`];
  plan.items.forEach((item, index) => {
    lines.push(`# [${index + 1}/${plan.items.length}] ${item.id}: ${redact(item.title, options.redactor)}`);
    for (const step of item.steps) lines.push(formatStep(step, options.redactor));
  });
  return `${lines.join("\n")}\n`;
}

/** The call lines only, in order (what the recording witness compares with what ran). */
export function planCallLines(plan: Plan, options: { redactor?: Redactor } = {}): string[] {
  return plan.items.flatMap((item) =>
    item.steps.flatMap((step) => (step.kind === "exec" ? [formatCall(step.call, options.redactor)] : [])),
  );
}

function callDocument(call: CommandCall & { mutates: boolean; reads?: readonly string[] }, redactor?: Redactor) {
  const env = Object.fromEntries(
    Object.entries(call.env ?? {}).map(([name, value]) => [
      name,
      call.secretEnv?.includes(name) ? REDACTED : redact(value, redactor),
    ]),
  );
  return {
    line: formatCall(call, redactor),
    command: call.command,
    args: call.args.map((arg) => redact(arg, redactor)),
    ...(Object.keys(env).length === 0 ? {} : { env }),
    ...(call.cwd === undefined ? {} : { cwd: call.cwd }),
    ...(call.input === undefined ? {} : { stdinBytes: Buffer.byteLength(call.input) }),
    reads: [...(call.reads ?? [])],
    mutates: call.mutates,
  };
}

function redactJson(value: JsonValue | undefined, redactor?: Redactor): JsonValue | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return redact(value, redactor);
  if (Array.isArray(value)) return value.map((entry) => redactJson(entry, redactor) ?? null);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, redactJson(entry, redactor) ?? null]));
  }
  return value;
}

/** The versioned document `-o json` prints: every call with its line, argv, files read and `mutates`. */
export function planDocument(plan: Plan, options: { redactor?: Redactor } = {}) {
  const { redactor } = options;
  return {
    apiVersion: plan.apiVersion,
    kind: plan.kind,
    name: redact(plan.name, redactor),
    observations: redactJson(plan.observations, redactor) ?? {},
    items: plan.items.map((item) => ({
      id: item.id,
      title: redact(item.title, redactor),
      steps: item.steps.map((step) =>
        step.kind === "exec"
          ? { kind: "exec" as const, ...callDocument(step.call, redactor) }
          : {
              kind: "action" as const,
              action: step.action,
              summary: redact(step.summary, redactor),
              mutates: step.mutates,
              ...(step.params === undefined ? {} : { params: redactJson(step.params, redactor) }),
            },
      ),
    })),
  };
}
