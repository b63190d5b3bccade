import { join } from "node:path";
import { type HealthCheck, renderPeeringKubeconfig } from "@nodekit/noderings-api";
import { action, exec } from "@nodekit/plan";
import * as z from "zod";
import { CONSUMER_KUBECONFIG, displayPath } from "../../services/home.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, verdict, writeRunFile } from "./common.ts";
import { outboundPeer } from "./outbound-peer.ts";
import { foreignClusterRole, liqoctlPeerArgs, observePeering, removeRunFile } from "./peer.ts";

/** The verify phase's check of the peering, and part of the inbound phase's probe: NodeRings reports both directions Established. */
export async function peeringChecks(ctx: Pick<RegisterContext, "api">, agentId: string): Promise<HealthCheck[]> {
  const status = await ctx.api.getPeeringStatus(agentId);
  return [
    check("peering-outbound", status.outbound.state === "Established", `outbound ${status.outbound.state}`),
    check("peering-inbound", status.inbound.state === "Established", `inbound ${status.inbound.state}`),
  ];
}

/**
 * The inbound phase's probe, locally: this cluster's ForeignCluster for NodeRings says it is
 * NodeRings' provider (role Consumer, or ConsumerAndProvider with the outbound direction):
 * the reverse peering's Tenant is here.
 */
export async function reverseChecks(
  ctx: Pick<RegisterContext, "runner" | "kube">,
  platformClusterId: string,
): Promise<HealthCheck[]> {
  const { role } = await foreignClusterRole(ctx, platformClusterId);
  const provider = role === "Consumer" || role === "ConsumerAndProvider";
  return [
    check(
      "liqo-reverse-peering",
      provider,
      provider
        ? undefined
        : `this cluster is not NodeRings' provider: ForeignCluster ${platformClusterId} has role ${role ?? "none"}`,
    ),
  ];
}

/**
 * 8. Inbound peering (NR-11): the reverse direction, NodeRings the consumer and this cluster
 * its provider. A Liqo peering is one-way and `liqoctl peer` needs the kubeconfigs of both
 * sides (liqotech/liqo@v1.0.1 docs/usage/peer.md): NodeRings issues a one-time consumer
 * credential for its own cluster, and nr runs the reverse `liqoctl peer` itself with it and
 * this cluster's kubeconfig, which never leaves the machine.
 */
export const inboundPeering = registerPhase({
  id: "inbound-peering",
  title: "Inbound peering",
  description:
    "run the reverse liqoctl peer (NodeRings the consumer) with a one-time consumer credential NodeRings issues, and wait until it reports both directions Established",
  needs: ["api", "wait", "kube", "tools", "paths", "redactor", "runner"],
  uses: { tools: ["liqoctl"] },
  outputs: z.strictObject({ inbound: z.literal("Established") }),
  inputs: (_ctx, prior) => ({
    agentId: prior.known(agent, "agentId") ?? null,
    clusterId: prior.require(agent, "clusterId"),
  }),
  observe: observePeering,
  // Always asks when it runs, never only when inbound is not Established yet: the outbound
  // phase runs again after an earlier phase, on --from-phase, --restart or a changed input,
  // and each outbound request leaves outbound Pending on the platform until this request
  // says the agent's side is up again. Running the reverse peering again on a peered cluster
  // changes nothing there (liqoctl finds its Tenant and network in place).
  plan(ctx, { prior, observation: { liqoctl, parameters } }) {
    const file = join(ctx.paths.run, CONSUMER_KUBECONFIG);
    const clusterId = prior.require(agent, "clusterId");
    return [
      action(
        "request-inbound",
        `tell NodeRings the outbound peering of cluster ${clusterId} is established and ask it for the reverse one: it issues a one-time consumer credential for its own cluster, written to ${displayPath(file)} (0600); nothing of this cluster's is sent`,
        { mutates: true, params: { clusterId, path: file } },
      ),
      exec(
        {
          command: liqoctl.path,
          args: liqoctlPeerArgs(
            { kubeconfig: file, remoteKubeconfig: ctx.kube.kubeconfig },
            parameters?.inbound,
            ctx.wait.seconds,
          ),
        },
        { mutates: true, reads: [file, ctx.kube.kubeconfig] },
      ),
      action("remove-file", `remove ${displayPath(file)}: it holds the one-time consumer credential`, {
        mutates: true,
        params: { path: file },
      }),
      action("complete-inbound", `tell NodeRings the reverse peering of cluster ${clusterId} is done`, {
        mutates: true,
      }),
      action(
        "wait-inbound",
        `wait up to ${ctx.wait.seconds}s for NodeRings to report the inbound peering Established`,
        { mutates: false },
      ),
    ];
  },
  actions: {
    "request-inbound": async (ctx, _step, io) => {
      const inbound = await ctx.api.requestInboundPeering(io.prior.require(agent, "agentId"), {
        clusterId: io.prior.require(agent, "clusterId"),
        outbound: "Established",
      });
      ctx.redactor.add(inbound.consumerUser.token, "NodeRings' one-time consumer credential");
      await writeRunFile(
        ctx.paths,
        join(ctx.paths.run, CONSUMER_KUBECONFIG),
        renderPeeringKubeconfig(inbound.consumerUser),
      );
    },
    "remove-file": (ctx) => removeRunFile(ctx, CONSUMER_KUBECONFIG),
    "complete-inbound": async (ctx, _step, io) => {
      await ctx.api.completeInboundPeering(io.prior.require(agent, "agentId"), {
        clusterId: io.prior.require(agent, "clusterId"),
        reversePeering: "Done",
      });
    },
    "wait-inbound": async (ctx, _step, io) => {
      await ctx.api.waitForInboundPeering(io.prior.require(agent, "agentId"), {
        intervalMs: ctx.wait.pollMs,
        timeoutMs: ctx.wait.seconds * 1000,
        signal: io.signal,
      });
      io.set("inbound", "Established");
    },
  },
  cleanup: (ctx) => removeRunFile(ctx, CONSUMER_KUBECONFIG),
  // Both directions in NodeRings' word, and the reverse one here: an outbound left Pending by
  // an outbound run this phase did not follow (killed in between, an older nr) is repaired by
  // --resume running this phase again.
  probe: async (ctx, _recorded, prior) =>
    verdict([
      ...(await peeringChecks(ctx, prior.require(agent, "agentId"))),
      ...(await reverseChecks(ctx, prior.require(outboundPeer, "platformClusterId"))),
    ]),
});
