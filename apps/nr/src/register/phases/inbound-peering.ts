import type { HealthCheck } from "@nodekit/noderings-api";
import { action } from "@nodekit/plan";
import * as z from "zod";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, verdict } from "./common.ts";

/** The verify phase's check of the peering, and the inbound phase's probe: NodeRings reports both directions Established. */
export async function peeringChecks(ctx: Pick<RegisterContext, "api">, agentId: string): Promise<HealthCheck[]> {
  const status = await ctx.api.getPeeringStatus(agentId);
  return [
    check("peering-outbound", status.outbound.state === "Established", `outbound ${status.outbound.state}`),
    check("peering-inbound", status.inbound.state === "Established", `inbound ${status.inbound.state}`),
  ];
}

/** 8. Inbound peering (NR-11): the bidirectional handshake completed. */
export const inboundPeering = registerPhase({
  id: "inbound-peering",
  title: "Inbound peering",
  description:
    "tell NodeRings the outbound peering is established, and wait until it reports both directions Established",
  needs: ["api", "wait"],
  uses: {},
  outputs: z.strictObject({ inbound: z.literal("Established") }),
  inputs: (_ctx, prior) => ({
    agentId: prior.known(agent, "agentId") ?? null,
    clusterId: prior.require(agent, "clusterId"),
  }),
  // Always asks when it runs, never only when inbound is not Established yet: the outbound
  // phase runs again after an earlier phase, on --from-phase, --restart or a changed input,
  // and each outbound request leaves outbound Pending on the platform until this request
  // says the agent's side is up again — while an inbound peering of the same cluster stays
  // Established. Asking again is harmless: the platform answers with where it stands.
  plan(ctx, { prior }) {
    return [
      action(
        "request-inbound",
        `tell NodeRings the outbound peering of cluster ${prior.require(agent, "clusterId")} is established and ask it to peer back`,
        { mutates: true },
      ),
      action(
        "wait-inbound",
        `wait up to ${ctx.wait.seconds}s for NodeRings to report the inbound peering Established`,
        { mutates: false },
      ),
    ];
  },
  actions: {
    "request-inbound": async (ctx, _step, io) => {
      await ctx.api.requestInboundPeering(io.prior.require(agent, "agentId"), {
        clusterId: io.prior.require(agent, "clusterId"),
        outbound: "Established",
      });
    },
    "wait-inbound": async (ctx, _step, io) => {
      await ctx.api.waitForInboundPeering(io.prior.require(agent, "agentId"), {
        intervalMs: ctx.wait.pollMs,
        timeoutMs: ctx.wait.seconds * 1000,
      });
      io.set("inbound", "Established");
    },
  },
  // Both directions: an outbound left Pending by an outbound run this phase did not follow
  // (killed in between, an older nr) is repaired by --resume running this phase again.
  probe: async (ctx, _recorded, prior) => verdict(await peeringChecks(ctx, prior.require(agent, "agentId"))),
});
