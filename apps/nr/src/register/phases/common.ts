import { writeFileSafe } from "@nodekit/fs-safe";
import { type KubeTarget, kubectlCall, runKube } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import type { PhaseIo, ProbeResult } from "@nodekit/phase-runner";
import { type ActionStep, action, type PlanStep } from "@nodekit/plan";
import * as z from "zod";
import { ensureNrDir, type NrPaths } from "../../services/home.ts";
import { installSummary, installTool, type ToolDecision } from "../../services/tools.ts";
import type { RegisterContext } from "../context.ts";

// What several register phases share: the files a run hands to a tool, waits, companion
// tools, and the checks that are both a phase's probe and a part of the verify phase.

/**
 * A file a run hands to a tool (a manifest, the peering kubeconfig), written 0600 into
 * `run/` (the user's own, 0700): atomically, never through a link put in its place, never
 * over another user's file (fs-safe).
 */
export async function writeRunFile(paths: NrPaths, path: string, content: string): Promise<void> {
  await ensureNrDir(paths, "run");
  await writeFileSafe(path, content, { mode: 0o600, what: "the run file" });
}

/** The `write-file` step: a manifest nr hands to kubectl, written where the plan says. Its action is {@link writeFile}. */
export function writeFileStep(summary: string, path: string, content: string): ActionStep {
  return action("write-file", summary, { mutates: true, params: { path, content } });
}

/** The `write-file` action: what its step says, written as {@link writeRunFile} writes. */
export async function writeFile(ctx: Pick<RegisterContext, "paths">, step: ActionStep): Promise<void> {
  const { path, content } = WriteFileParams.parse(step.params);
  await writeRunFile(ctx.paths, path, content);
}

const WriteFileParams = z.object({ path: z.string(), content: z.string() });

/** A kubectl wait: its request timeout covers the whole wait (a watch outlives the default 30 s). */
export function waitTarget(kube: KubeTarget, seconds: number): KubeTarget {
  return { ...kube, requestTimeout: `${seconds + 30}s` };
}

/** What a phase plans with when a value is not known yet (a dry run before the agent exists). */
export const placeholder = (what: string) => `<${what}>`;

/** The step that installs a companion tool into ~/.nr/bin, when it is not here at the pinned version. */
export function toolSteps(decision: ToolDecision, phaseTool: string): PlanStep[] {
  if (decision.action === "use") return [];
  return [
    action("install-tool", installSummary(decision), {
      mutates: true,
      params: {
        tool: phaseTool,
        version: decision.version,
        url: decision.artifact.url,
        sha256: decision.artifact.sha256,
        path: decision.path,
      },
    }),
  ];
}

/** The `install-tool` action: downloads, checks and installs what the phase's observation decided. */
export async function installToolAction(
  ctx: Pick<RegisterContext, "runner" | "transport" | "onDownload" | "onInstalled" | "paths">,
  decision: ToolDecision,
  io: Pick<PhaseIo<unknown, { installed?: string | undefined }>, "signal" | "report" | "set">,
): Promise<void> {
  if (decision.action !== "install") return;
  await installTool(decision, {
    runner: ctx.runner,
    paths: ctx.paths,
    transport: ctx.transport,
    signal: io.signal,
    onProgress: (received, total) => {
      ctx.onDownload?.(decision.tool, received, total);
      io.report(`${decision.tool}: ${(received / 1e6).toFixed(1)}${total ? ` of ${(total / 1e6).toFixed(1)}` : ""} MB`);
    },
  });
  io.set("installed", decision.path);
  ctx.onInstalled(decision.tool);
}

/** A health check, as the verify phase reports it to NodeRings and a probe reads it. */
export function check(id: string, ok: boolean | "skip", message?: string): HealthCheck {
  return { id, result: ok === "skip" ? "skip" : ok ? "pass" : "fail", ...(message ? { message } : {}) };
}

/** A probe's answer from a phase's checks: in place when none failed; else which failed and why. */
export function verdict(checks: readonly HealthCheck[]): ProbeResult {
  const failed = checks.filter((entry) => entry.result === "fail");
  if (failed.length === 0) return { ok: true };
  return { ok: false, reason: failed.map((entry) => `${entry.id}: ${entry.message ?? "failed"}`).join("; ") };
}

const Conditions = z.object({
  status: z.object({ conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional() }).optional(),
});

/** Whether a Kubernetes object (kubectl's JSON of it) has condition `type` True. */
export function conditionTrue(json: string, type: string): boolean {
  const conditions = Conditions.parse(JSON.parse(json)).status?.conditions ?? [];
  return conditions.some((condition) => condition.type === type && condition.status === "True");
}

/** `kubectl get <what> [-n namespace]` in the agent cluster: its JSON (or name) when it is there. */
export async function getObject(
  ctx: Pick<RegisterContext, "runner" | "kube">,
  what: string,
  doing: string,
  output: "json" | "name" = "json",
  namespace?: string,
): Promise<{ found: true; stdout: string } | { found: false }> {
  const args = ["get", what, ...(namespace === undefined ? [] : ["-n", namespace]), "-o", output];
  const answer = await runKube(ctx.runner, kubectlCall(ctx.kube, args), {
    doing,
    kubeconfig: ctx.kube.kubeconfig,
    cluster: "the agent cluster",
  });
  return answer.found ? { found: true, stdout: answer.stdout } : { found: false };
}
