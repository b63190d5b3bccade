import { kubectlCall, runKube } from "@nodekit/kube";
import type { HealthCheck } from "@nodekit/noderings-api";
import * as z from "zod";
import { sameVersion } from "../../services/tools.ts";
import type { RegisterContext } from "../context.ts";
import { check, getObject } from "./common.ts";

// The verify phase's judgement of the peering from this cluster's own Liqo, not from
// NodeRings' word (issue 23, item 9): the ForeignCluster's role and module conditions as
// Liqo's ForeignCluster controller writes them, the virtual node, and `liqoctl info -o json`.

/** What Liqo's ForeignCluster controller sets on a healthy condition (apis/core/v1beta1/foreigncluster_types.go). */
const HEALTHY = new Set(["Established", "Ready"]);

const Module = z.object({
  enabled: z.boolean().optional(),
  conditions: z.array(z.object({ type: z.string(), status: z.string(), message: z.string().optional() })).optional(),
});

const ForeignCluster = z.object({
  status: z
    .object({
      role: z.string().optional(),
      modules: z.object({ networking: Module.optional(), authentication: Module.optional() }).partial().optional(),
    })
    .optional(),
});

type ModuleStatus = z.infer<typeof Module>;

/**
 * One module's check: enabled, each condition `required` there with its healthy status, and
 * no condition in another state than Established or Ready (liqoctl info's own rule,
 * pkg/liqoctl/info/common/utils.go CheckModuleStatus).
 */
function moduleCheck(
  id: string,
  what: string,
  module: ModuleStatus | undefined,
  required: Readonly<Record<string, string>>,
): HealthCheck {
  if (module?.enabled !== true) return check(id, false, `Liqo's ${what} module is not enabled for NodeRings`);
  const conditions = module.conditions ?? [];
  const problems = [
    ...Object.entries(required)
      .filter(([type]) => !conditions.some((c) => c.type === type))
      .map(([type, status]) => `${type} missing (want ${status})`),
    ...conditions
      .filter((c) => (required[c.type] !== undefined ? c.status !== required[c.type] : !HEALTHY.has(c.status)))
      .map((c) => `${c.type} ${c.status}${c.message ? ` (${c.message})` : ""}`),
  ];
  return check(id, problems.length === 0, problems.length === 0 ? undefined : problems.join(", "));
}

/**
 * This cluster's ForeignCluster for NodeRings after both peerings: role ConsumerAndProvider
 * (NodeRings consumes from it and provides to it), the network connection Established and
 * the authentication of both directions Ready (the control-plane Identity toward NodeRings,
 * the Tenant NodeRings uses here), and the virtual node for NodeRings in place.
 */
export async function foreignClusterChecks(
  ctx: Pick<RegisterContext, "runner" | "kube">,
  platformClusterId: string,
): Promise<HealthCheck[]> {
  const answer = await getObject(ctx, `foreignclusters.core.liqo.io/${platformClusterId}`, "checking the peering");
  const status = answer.found ? ForeignCluster.parse(JSON.parse(answer.stdout)).status : undefined;
  const role = status?.role;
  const nodes = await runKube(
    ctx.runner,
    kubectlCall(ctx.kube, [
      "get",
      "nodes",
      "-l",
      `liqo.io/type=virtual-node,liqo.io/remote-cluster-id=${platformClusterId}`,
      "-o",
      "name",
    ]),
    { doing: "checking the virtual node", kubeconfig: ctx.kube.kubeconfig, cluster: "the agent cluster" },
  );
  const virtualNodes = nodes.found ? nodes.stdout.split("\n").filter((line) => line.trim() !== "") : [];
  return [
    check(
      "liqo-peering-role",
      role === "ConsumerAndProvider",
      answer.found
        ? `ForeignCluster ${platformClusterId} has role ${role ?? "none"}${role === "ConsumerAndProvider" ? "" : ", not ConsumerAndProvider (both peerings)"}`
        : `no ForeignCluster ${platformClusterId}`,
    ),
    moduleCheck("liqo-network", "networking", status?.modules?.networking, {
      NetworkConnectionStatus: "Established",
    }),
    moduleCheck("liqo-auth", "authentication", status?.modules?.authentication, {
      AuthIdentityControlPlaneStatus: "Ready",
      AuthTenantStatus: "Ready",
    }),
    check(
      "liqo-virtual-node",
      virtualNodes.length > 0,
      virtualNodes.length > 0
        ? virtualNodes.join(", ")
        : `no node labelled liqo.io/type=virtual-node for ${platformClusterId}: nothing can be offloaded to NodeRings`,
    ),
  ];
}

const LiqoInfo = z.object({
  local: z.object({ clusterID: z.string(), version: z.string() }),
  health: z.object({ healthy: z.boolean(), unhealthyPods: z.record(z.string(), z.unknown()).optional() }),
  peerings: z.object({
    peers: z.array(
      z.object({
        clusterID: z.string(),
        role: z.string(),
        networkingStatus: z.string(),
        authenticationStatus: z.string(),
        offloadingStatus: z.string(),
      }),
    ),
  }),
});

/**
 * `liqoctl info -o json` (pkg/liqoctl/info: sections `local`, `health`, `peerings`) is sane:
 * this cluster's id and the pinned Liqo version, every Liqo pod ready, and NodeRings among
 * the peers with all three modules Healthy.
 */
export async function liqoInfoChecks(
  ctx: Pick<RegisterContext, "runner" | "kube" | "tools">,
  expected: { clusterId: string; version: string; platformClusterId: string },
): Promise<HealthCheck[]> {
  const liqoctl = await ctx.tools.liqoctl();
  if (liqoctl.action !== "use") {
    return [check("liqo-info", false, `no liqoctl ${liqoctl.version} to ask (${liqoctl.found})`)];
  }
  const run = await ctx.runner.run(
    { command: liqoctl.path, args: ["info", "--kubeconfig", ctx.kube.kubeconfig, "-o", "json"] },
    { allowFailure: true },
  );
  if (run.exitCode !== 0) {
    return [check("liqo-info", false, `liqoctl info failed: ${run.stderr.trim().split("\n").at(-1) ?? ""}`)];
  }
  let info: z.infer<typeof LiqoInfo>;
  try {
    info = LiqoInfo.parse(JSON.parse(run.stdout));
  } catch {
    return [check("liqo-info", false, "liqoctl info -o json printed no local, health and peerings sections")];
  }
  const peer = info.peerings.peers.find((entry) => entry.clusterID === expected.platformClusterId);
  const problems = [
    ...(info.local.clusterID === expected.clusterId
      ? []
      : [`cluster id ${info.local.clusterID}, not ${expected.clusterId}`]),
    ...(sameVersion(info.local.version, expected.version)
      ? []
      : [`Liqo ${info.local.version || "of unknown version"}, not ${expected.version}`]),
    ...(info.health.healthy
      ? []
      : [`Liqo is unhealthy (pods not ready: ${Object.keys(info.health.unhealthyPods ?? {}).join(", ") || "?"})`]),
    ...(peer === undefined
      ? [`no peering with ${expected.platformClusterId}`]
      : (["networkingStatus", "authenticationStatus", "offloadingStatus"] as const)
          .filter((module) => peer[module] !== "Healthy")
          .map((module) => `${module} ${peer[module]}`)),
  ];
  return [check("liqo-info", problems.length === 0, problems.length === 0 ? undefined : problems.join("; "))];
}
