import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type HealthCheck, type PeeringParameters, renderPeeringKubeconfig } from "@nodekit/noderings-api";
import { action, exec } from "@nodekit/plan";
import * as z from "zod";
import { displayPath, PEERING_KUBECONFIG } from "../../services/home.ts";
import type { ToolDecision } from "../../services/tools.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, getObject, placeholder, verdict, writeRunFile } from "./common.ts";

/** liqoctl, and the peering parameters NodeRings gives (none before the agent exists: a dry run). */
interface PeeringObservation {
  liqoctl: ToolDecision;
  parameters: PeeringParameters | undefined;
}

const ForeignCluster = z.object({ status: z.object({ role: z.string().optional() }).optional() });

/**
 * The verify phase's check of the outbound peering, and the outbound phase's probe: the
 * ForeignCluster toward NodeRings is there, with NodeRings as the provider.
 */
export async function outboundChecks(
  ctx: Pick<RegisterContext, "runner" | "kube">,
  platformClusterId: string,
): Promise<HealthCheck[]> {
  const answer = await getObject(ctx, `foreignclusters.core.liqo.io/${platformClusterId}`, "checking the peering");
  if (!answer.found) return [check("liqo-foreign-cluster", false, `no ForeignCluster ${platformClusterId}`)];
  const role = ForeignCluster.parse(JSON.parse(answer.stdout)).status?.role;
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
  async observe(ctx, prior): Promise<PeeringObservation> {
    const liqoctl = await ctx.tools.liqoctl();
    const id = prior.known(agent, "agentId");
    return { liqoctl, parameters: id === undefined ? undefined : await ctx.api.getPeeringParameters(id) };
  },
  plan(ctx, { prior, observation: { liqoctl, parameters } }) {
    const file = join(ctx.paths.run, PEERING_KUBECONFIG);
    const from = (value: string | number | undefined, what: string) =>
      value === undefined ? placeholder(`${what} from NodeRings`) : String(value);
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
          args: [
            "peer",
            "--kubeconfig",
            ctx.kube.kubeconfig,
            "--remote-kubeconfig",
            file,
            "--gw-server-service-location",
            from(parameters?.gateway.serverLocation, "gateway location"),
            "--gw-server-service-type",
            from(parameters?.gateway.serviceType, "gateway service type"),
            "--gw-server-service-port",
            from(parameters?.gateway.port, "gateway port"),
            "--mtu",
            from(parameters?.gateway.mtu, "MTU"),
            "--cpu",
            from(parameters?.resources.cpu, "CPU"),
            "--memory",
            from(parameters?.resources.memory, "memory"),
            "--pods",
            from(parameters?.resources.pods, "pods"),
            ...(parameters?.inBand === true ? ["--in-band"] : []),
            "--timeout",
            `${ctx.wait.seconds}s`,
            "--skip-confirm",
          ],
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
    "remove-file": async (ctx) => {
      await rm(join(ctx.paths.run, PEERING_KUBECONFIG), { force: true });
    },
  },
  async cleanup(ctx) {
    await rm(join(ctx.paths.run, PEERING_KUBECONFIG), { force: true });
  },
  preview: (_ctx, { observation: { parameters } }) =>
    parameters === undefined ? {} : { platformClusterId: parameters.platformClusterId },
  probe: async (ctx, recorded) => verdict(await outboundChecks(ctx, recorded.platformClusterId)),
});
