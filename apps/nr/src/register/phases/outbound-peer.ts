import { join } from "node:path";
import { type HealthCheck, renderPeeringKubeconfig } from "@nodekit/noderings-api";
import { action, exec } from "@nodekit/plan";
import * as z from "zod";
import { displayPath, PEERING_KUBECONFIG } from "../../services/home.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, verdict, writeRunFile } from "./common.ts";
import { foreignClusterRole, liqoctlPeerArgs, observePeering, removeRunFile } from "./peer.ts";

/**
 * The verify phase's check of the outbound peering, and the outbound phase's probe: the
 * ForeignCluster toward NodeRings is there, with NodeRings as the provider.
 */
export async function outboundChecks(
  ctx: Pick<RegisterContext, "runner" | "kube">,
  platformClusterId: string,
): Promise<HealthCheck[]> {
  const { found, role } = await foreignClusterRole(ctx, platformClusterId);
  if (!found) return [check("liqo-foreign-cluster", false, `no ForeignCluster ${platformClusterId}`)];
  return [
    check(
      "liqo-foreign-cluster",
      role === "Provider" || role === "ConsumerAndProvider",
      `ForeignCluster ${platformClusterId} has role ${role ?? "none"}`,
    ),
  ];
}

/** 6. Outbound peer (NR-9): peer toward NodeRings with the parameters and one-time peering user it gives. */
export const outboundPeer = registerPhase({
  id: "outbound-peer",
  title: "Outbound peer",
  description: "peer toward NodeRings with liqoctl, with the parameters and one-time peering user the API gives",
  needs: ["api", "kube", "tools", "network", "pins", "paths", "wait", "redactor", "runner"],
  uses: { tools: ["liqoctl"] },
  outputs: z.strictObject({ platformClusterId: z.string().min(1) }),
  inputs: (ctx, prior) => ({
    agentId: prior.known(agent, "agentId") ?? null,
    clusterId: prior.require(agent, "clusterId"),
    network: { ...ctx.network },
    liqo: ctx.pins.pins.tools.liqo.version,
  }),
  observe: observePeering,
  plan(ctx, { prior, observation: { liqoctl, parameters } }) {
    const file = join(ctx.paths.run, PEERING_KUBECONFIG);
    const clusterId = prior.require(agent, "clusterId");
    return [
      action(
        "start-outbound-peering",
        `ask NodeRings to start outbound peering of cluster ${clusterId} (pod ${ctx.network.podCidr}, service ${ctx.network.serviceCidr}, Liqo ${ctx.pins.pins.tools.liqo.version}); write the one-time peering user it issues to ${displayPath(file)} (0600)`,
        { mutates: true, params: { clusterId, path: file } },
      ),
      exec(
        {
          command: liqoctl.path,
          args: liqoctlPeerArgs(
            { kubeconfig: ctx.kube.kubeconfig, remoteKubeconfig: file },
            parameters,
            ctx.wait.seconds,
          ),
        },
        { mutates: true, reads: [file] },
      ),
      action("remove-file", `remove ${displayPath(file)}: it holds the one-time peering token`, {
        mutates: true,
        params: { path: file },
      }),
    ];
  },
  actions: {
    "start-outbound-peering": async (ctx, _step, io) => {
      const outbound = await ctx.api.startOutboundPeering(io.prior.require(agent, "agentId"), {
        clusterId: io.prior.require(agent, "clusterId"),
        liqoVersion: ctx.pins.pins.tools.liqo.version,
        podCIDR: ctx.network.podCidr,
        serviceCIDR: ctx.network.serviceCidr,
      });
      ctx.redactor.add(outbound.peeringUser.token, "the peering user's token");
      await writeRunFile(
        ctx.paths,
        join(ctx.paths.run, PEERING_KUBECONFIG),
        renderPeeringKubeconfig(outbound.peeringUser),
      );
      io.set("platformClusterId", outbound.platformClusterId);
    },
    "remove-file": (ctx) => removeRunFile(ctx, PEERING_KUBECONFIG),
  },
  cleanup: (ctx) => removeRunFile(ctx, PEERING_KUBECONFIG),
  preview: (_ctx, { observation: { parameters } }) =>
    parameters === undefined ? {} : { platformClusterId: parameters.platformClusterId },
  probe: async (ctx, recorded) => verdict(await outboundChecks(ctx, recorded.platformClusterId)),
});
