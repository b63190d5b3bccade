import { join } from "node:path";
import { UserError } from "@nodekit/errors";
import { kubectlCall } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import { action, exec } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "../../errors.ts";
import { displayPath } from "../../services/home.ts";
import type { ToolDecision } from "../../services/tools.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, placeholder, verdict, writeFile, writeFileStep } from "./common.ts";

/** One namespace to offload, with the strategies NodeRings asks for. */
interface OffloadTarget {
  name: string;
  pod: string;
  mapping: string;
  required: boolean;
}

/** liqoctl, and the namespaces to offload (placeholders for NodeRings' before the agent exists: a dry run). */
interface OffloadingObservation {
  liqoctl: ToolDecision;
  namespaces: OffloadTarget[];
}

/**
 * The verify phase's check of offloading, and the offloading phase's probe: NodeRings lists
 * each namespace as offloaded (those recorded; without a record, the ones it requires).
 */
export async function offloadingChecks(
  ctx: Pick<RegisterContext, "api">,
  agentId: string,
  recorded: readonly string[] | undefined,
): Promise<HealthCheck[]> {
  const targets = await ctx.api.getOffloadingTargets(agentId);
  const wanted = recorded ?? targets.required.map((ns) => ns.name);
  const missing = wanted.filter((name) => !targets.offloaded.includes(name));
  return [
    check(
      "offloading",
      missing.length === 0,
      missing.length === 0 ? `offloaded: ${wanted.join(", ")}` : `not offloaded: ${missing.join(", ")}`,
    ),
  ];
}

/** 7. Offloading (NR-10): the VNC gateway namespace, and the optional ones named. */
export const offloading = registerPhase({
  id: "offloading",
  title: "Offloading",
  description: "offload the VNC gateway namespace, and each --offload-namespace",
  needs: ["api", "kube", "tools", "offload", "paths", "runner"],
  uses: { tools: ["liqoctl"] },
  outputs: z.strictObject({ namespaces: z.array(z.string()) }),
  inputs: (ctx, prior) => ({ agentId: prior.known(agent, "agentId") ?? null, optional: [...ctx.offload].sort() }),
  async observe(ctx, prior): Promise<OffloadingObservation> {
    const liqoctl = await ctx.tools.liqoctl();
    const id = prior.known(agent, "agentId");
    if (id === undefined) {
      const unknown = { pod: placeholder("strategy"), mapping: placeholder("strategy") };
      return {
        liqoctl,
        namespaces: [
          { name: placeholder("required namespaces from NodeRings"), ...unknown, required: true },
          ...ctx.offload.map((name) => ({ name, ...unknown, required: false })),
        ],
      };
    }
    const targets = await ctx.api.getOffloadingTargets(id);
    const refused = ctx.offload.filter((name) => targets.optional.forbidden.includes(name));
    if (refused.length > 0 || ctx.offload.length > targets.optional.max) {
      throw new UserError(
        errorCodes.OFFLOAD_NAMESPACE_REFUSED,
        refused.length > 0
          ? `NodeRings does not allow offloading ${refused.join(", ")}`
          : `NodeRings allows at most ${targets.optional.max} optional namespaces; ${ctx.offload.length} were given`,
        {
          why: `the namespaces it never offloads are ${targets.optional.forbidden.join(", ")}`,
          next: "leave those out of --offload-namespace",
        },
      );
    }
    const required = targets.required.map((ns) => ({
      name: ns.name,
      pod: ns.podOffloadingStrategy,
      mapping: ns.namespaceMappingStrategy,
      required: true,
    }));
    const optional = ctx.offload
      .filter((name) => !required.some((ns) => ns.name === name))
      .map((name) => ({
        name,
        pod: targets.optional.podOffloadingStrategy,
        mapping: targets.optional.namespaceMappingStrategy,
        required: false,
      }));
    return { liqoctl, namespaces: [...required, ...optional] };
  },
  plan(ctx, { observation: { liqoctl, namespaces } }) {
    const file = join(ctx.paths.run, "offloaded-namespaces.json");
    const names = namespaces.map((ns) => ns.name);
    const manifest = `${JSON.stringify(
      {
        apiVersion: "v1",
        kind: "List",
        items: names.map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
      },
      null,
      2,
    )}\n`;
    return [
      writeFileStep(`write the namespaces to offload (${names.join(", ")}) to ${displayPath(file)}`, file, manifest),
      exec(kubectlCall(ctx.kube, ["apply", "-f", file]), { mutates: true, reads: [file] }),
      ...namespaces.map((ns) =>
        exec(
          {
            command: liqoctl.path,
            args: [
              "offload",
              "namespace",
              ns.name,
              "--kubeconfig",
              ctx.kube.kubeconfig,
              "--pod-offloading-strategy",
              ns.pod,
              "--namespace-mapping-strategy",
              ns.mapping,
              "--skip-confirm",
            ],
          },
          { mutates: true },
        ),
      ),
      action("report-offloading", `tell NodeRings which namespaces are offloaded: ${names.join(", ")}`, {
        mutates: true,
        params: { namespaces: names },
      }),
    ];
  },
  actions: {
    "write-file": writeFile,
    "report-offloading": async (ctx, _step, io) => {
      const namespaces = io.observation.namespaces.map((ns) => ns.name);
      await ctx.api.reportOffloading(io.prior.require(agent, "agentId"), { namespaces });
      io.set("namespaces", namespaces);
    },
  },
  probe: async (ctx, recorded, prior) =>
    verdict(await offloadingChecks(ctx, prior.require(agent, "agentId"), recorded.namespaces)),
});
