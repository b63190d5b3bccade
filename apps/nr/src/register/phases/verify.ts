import { type Problem, UserError } from "@nodekit/errors";
import { type CreateHealthReportRequest, type HealthCheck, HealthCheckSchema } from "@nodekit/noderings-api";
import type { PriorOutputs } from "@nodekit/phase-runner";
import { action } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "../../errors.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { calicoChecks } from "./calico.ts";
import { check } from "./common.ts";
import { peeringChecks } from "./inbound-peering.ts";
import { k3s, k3sChecks } from "./k3s.ts";
import { liqoChecks } from "./liqo.ts";
import { offloading, offloadingChecks } from "./offloading.ts";
import { operator, operatorChecks } from "./operator.ts";
import { outboundChecks, outboundPeer } from "./outbound-peer.ts";

const VerifyOutputs = z.strictObject({
  checks: z.array(HealthCheckSchema),
  result: z.enum(["pass", "fail"]),
  agentState: z.string(),
});

/**
 * Every earlier phase's check, in order — the same checks their probes make on resume — for
 * what they recorded; a phase that recorded nothing fails its check (or, for the operator
 * skipped with --skip-operator-install, is reported skipped).
 */
async function healthChecks(
  ctx: Pick<RegisterContext, "api" | "kube" | "runner" | "operator" | "tools" | "helmEnv">,
  prior: PriorOutputs,
): Promise<HealthCheck[]> {
  const node = prior.recorded(k3s)?.nodeName;
  const platform = prior.recorded(outboundPeer)?.platformClusterId;
  const agentId = prior.require(agent, "agentId");
  return [
    ...(node === undefined
      ? [check("k3s-node-ready", false, `the ${k3s.id} phase recorded no node`)]
      : await k3sChecks(ctx, node)),
    ...(await calicoChecks(ctx)),
    ...(await liqoChecks(ctx)),
    ...(platform === undefined
      ? [check("liqo-foreign-cluster", false, `the ${outboundPeer.id} phase recorded no platform cluster`)]
      : await outboundChecks(ctx, platform)),
    ...(await peeringChecks(ctx, agentId)),
    ...(await offloadingChecks(ctx, agentId, prior.recorded(offloading)?.namespaces)),
    ...(ctx.operator.skip && prior.recorded(operator) === undefined
      ? [check("operator", "skip", "not installed (--skip-operator-install): VMs cannot be sold until it runs")]
      : await operatorChecks(ctx)),
  ];
}

/** 10. Verify (NR-13): a pass/fail health gate over everything above, reported to NodeRings. */
export const verify = registerPhase({
  id: "verify",
  title: "Verify",
  description: "pass/fail health gate over everything above, reported to NodeRings; the exit code says which",
  needs: ["api", "kube", "runner", "operator", "pins", "reporter", "clock", "tools", "helmEnv"],
  uses: {},
  outputs: VerifyOutputs,
  inputs: () => ({}),
  plan: () => [
    action(
      "check-health",
      "check the node Ready, Calico Available, Liqo installed, the ForeignCluster toward NodeRings, both peering directions and the offloaded namespaces in NodeRings, and the operator release (or that it was skipped)",
      { mutates: false },
    ),
    action("report-health", "post the result to NodeRings (pass or fail, each check; never a secret)", {
      mutates: true,
    }),
  ],
  actions: {
    "check-health": async (ctx, _step, io) => {
      io.set("checks", await healthChecks(ctx, io.prior));
    },
    "report-health": async (ctx, _step, io) => {
      const checks = io.get("checks") ?? [];
      const failed = checks.filter((entry) => entry.result === "fail");
      const report: CreateHealthReportRequest = {
        result: failed.length === 0 ? "pass" : "fail",
        checks,
        observedAt: ctx.clock().toISOString(),
        pinSetHash: ctx.pins.hash,
        reporter: ctx.reporter,
      };
      const answer = await ctx.api.postHealthReport(io.prior.require(agent, "agentId"), report);
      io.set("result", report.result);
      io.set("agentState", answer.agentState);
      if (failed.length > 0) {
        throw new UserError(
          errorCodes.VERIFY_FAILED,
          `${failed.length} of ${checks.length} health checks failed; NodeRings has the agent as ${answer.agentState}`,
          {
            problems: failed.map(
              (entry): Problem => ({
                severity: "error",
                source: "verify",
                path: [entry.id],
                message: entry.message ?? "failed",
              }),
            ),
            next: "fix what the checks say, then run verify again",
          },
        );
      }
    },
  },
});
