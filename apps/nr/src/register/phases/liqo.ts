import type { HealthCheck } from "@nodekit/noderings-api";
import { exec } from "@nodekit/plan";
import * as z from "zod";
import type { ToolDecision } from "../../services/tools.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, getObject, installToolAction, toolSteps, verdict } from "./common.ts";

/** The verify phase's check of Liqo, and the Liqo phase's probe: its namespace is there. */
export async function liqoChecks(ctx: Pick<RegisterContext, "runner" | "kube">): Promise<HealthCheck[]> {
  const answer = await getObject(ctx, "namespace/liqo", "checking Liqo", "name");
  return [check("liqo-installed", answer.found, answer.found ? undefined : "the liqo namespace is not there")];
}

/** 5. Liqo (NR-8): the pinned Liqo, installed with liqoctl for k3s. */
export const liqo = registerPhase({
  id: "liqo",
  title: "Liqo",
  description: "install the pinned Liqo with liqoctl for k3s, with the same pod and service CIDRs",
  needs: ["pins", "network", "kube", "wait", "tools", "runner", "transport", "onDownload", "onInstalled", "paths"],
  uses: { tools: ["liqoctl"] },
  outputs: z.strictObject({
    version: z.string(),
    clusterId: z.string(),
    /** Where liqoctl was installed, when this phase installed it. */
    installed: z.string().optional(),
  }),
  inputs: (ctx, prior) => ({
    version: ctx.pins.pins.tools.liqo.version,
    network: { ...ctx.network },
    clusterId: prior.require(agent, "clusterId"),
  }),
  observe: async (ctx): Promise<{ liqoctl: ToolDecision }> => ({ liqoctl: await ctx.tools.liqoctl() }),
  plan(ctx, { prior, observation: { liqoctl } }) {
    return [
      ...toolSteps(liqoctl, "liqoctl"),
      exec(
        {
          command: liqoctl.path,
          args: [
            "install",
            "k3s",
            "--kubeconfig",
            ctx.kube.kubeconfig,
            "--cluster-id",
            prior.require(agent, "clusterId"),
            "--pod-cidr",
            ctx.network.podCidr,
            "--service-cidr",
            ctx.network.serviceCidr,
            "--version",
            ctx.pins.pins.tools.liqo.version,
            "--timeout",
            `${ctx.wait.seconds}s`,
            "--skip-confirm",
          ],
        },
        { mutates: true },
      ),
    ];
  },
  actions: { "install-tool": async (ctx, _step, io) => installToolAction(ctx, io.observation.liqoctl, io) },
  recorded: (ctx, { prior }) => ({
    version: ctx.pins.pins.tools.liqo.version,
    clusterId: prior.require(agent, "clusterId"),
  }),
  probe: async (ctx) => verdict(await liqoChecks(ctx)),
});
