import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { PeeringParameters } from "@nodekit/noderings-api";
import type { PriorOutputs } from "@nodekit/phase-runner";
import * as z from "zod";
import type { ToolDecision } from "../../services/tools.ts";
import type { RegisterContext } from "../context.ts";
import { agent } from "./agent.ts";
import { getObject, placeholder } from "./common.ts";

// What the two peering phases (outbound-peer, inbound-peering) do alike: observe liqoctl and
// NodeRings' peering parameters, run `liqoctl peer` with one direction's parameters, read the
// role of the ForeignCluster toward NodeRings, and remove the one-time credential's file.

/** liqoctl, and the peering parameters NodeRings gives (none before the agent exists: a dry run). */
export interface PeeringObservation {
  liqoctl: ToolDecision;
  parameters: PeeringParameters | undefined;
}

/** Both peering phases' observation. */
export async function observePeering(
  ctx: Pick<RegisterContext, "tools" | "api">,
  prior: PriorOutputs,
): Promise<PeeringObservation> {
  const liqoctl = await ctx.tools.liqoctl();
  const id = prior.known(agent, "agentId");
  return { liqoctl, parameters: id === undefined ? undefined : await ctx.api.getPeeringParameters(id) };
}

/** One direction's parameters, as NodeRings gives them: the outbound one's, or `inbound`. */
type Direction = Pick<PeeringParameters, "gateway" | "resources" | "inBand">;

/**
 * `liqoctl peer`'s arguments for the peering from the cluster of `kubeconfig` (the consumer)
 * to that of `remoteKubeconfig` (the provider), with one direction's parameters, waiting up to
 * `waitSeconds`.
 */
export function liqoctlPeerArgs(
  kubeconfigs: { kubeconfig: string; remoteKubeconfig: string },
  direction: Direction | undefined,
  waitSeconds: number,
): string[] {
  // Each flag's value, or a placeholder naming it in a dry run, before NodeRings gives it.
  const given: Array<[flag: string, value: string | number | undefined, what: string]> = [
    ["--gw-server-service-location", direction?.gateway.serverLocation, "gateway location"],
    ["--gw-server-service-type", direction?.gateway.serviceType, "gateway service type"],
    ["--gw-server-service-port", direction?.gateway.port, "gateway port"],
    ["--mtu", direction?.gateway.mtu, "MTU"],
    ["--cpu", direction?.resources.cpu, "CPU"],
    ["--memory", direction?.resources.memory, "memory"],
    ["--pods", direction?.resources.pods, "pods"],
  ];
  return [
    "peer",
    "--kubeconfig",
    kubeconfigs.kubeconfig,
    "--remote-kubeconfig",
    kubeconfigs.remoteKubeconfig,
    ...given.flatMap(([flag, value, what]) => [
      flag,
      value === undefined ? placeholder(`${what} from NodeRings`) : String(value),
    ]),
    ...(direction?.inBand === true ? ["--in-band"] : []),
    "--timeout",
    `${waitSeconds}s`,
    "--skip-confirm",
  ];
}

const ForeignClusterRole = z.object({ status: z.object({ role: z.string().optional() }).optional() });

/** The ForeignCluster toward NodeRings (named by its cluster id) on this cluster: found, and its role. */
export async function foreignClusterRole(
  ctx: Pick<RegisterContext, "runner" | "kube">,
  platformClusterId: string,
): Promise<{ found: boolean; role: string | undefined }> {
  const answer = await getObject(ctx, `foreignclusters.core.liqo.io/${platformClusterId}`, "checking the peering");
  if (!answer.found) return { found: false, role: undefined };
  return { found: true, role: ForeignClusterRole.parse(JSON.parse(answer.stdout)).status?.role };
}

/** Removes the run directory's file `name` (a one-time credential), if it is there. */
export async function removeRunFile(ctx: Pick<RegisterContext, "paths">, name: string): Promise<void> {
  await rm(join(ctx.paths.run, name), { force: true });
}
