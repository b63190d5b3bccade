import { UserError } from "@nodekit/errors";
import type { HealthCheck } from "@nodekit/noderings-api";
import { exec } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "../../errors.ts";
import type { ToolDecision } from "../../services/tools.ts";
import { type RegisterContext, registerPhase } from "../context.ts";
import { agent } from "./agent.ts";
import { check, getObject, installToolAction, placeholder, toolSteps, verdict } from "./common.ts";

/** The verify phase's check of Liqo, and the Liqo phase's probe: its namespace is there. */
export async function liqoChecks(ctx: Pick<RegisterContext, "runner" | "kube">): Promise<HealthCheck[]> {
  const answer = await getObject(ctx, "namespace/liqo", "checking Liqo", "name");
  return [check("liqo-installed", answer.found, answer.found ? undefined : "the liqo namespace is not there")];
}

/**
 * What Liqo reflects into NodeRings' cluster, restricted for a remote in another
 * administrative domain (liqotech/liqo@v1.0.1 docs/usage/reflection.md): Secrets of an
 * offloaded namespace only when annotated `liqo.io/allow-reflection` (the default DenyList
 * copies them all, "verbatim"), and no ServiceAccount tokens (the virtual kubelet's
 * `--enable-apiserver-support=false`, the doc's fix "if the clusters are under the control of
 * different administrative domains"; the chart adds `=true` otherwise).
 */
const LIQO_REFLECTION = [
  "offloading.reflection.secret.type=AllowList",
  "virtualKubelet.extra.args={--enable-apiserver-support=false}",
] as const;

/** API_SERVER_URL_UNKNOWN: checked before a run that installs Liqo, and again when the phase plans. */
export function apiServerUnknown(): UserError {
  return new UserError(
    errorCodes.API_SERVER_URL_UNKNOWN,
    "cannot tell where NodeRings reaches this cluster's API server: this machine has no default route with an IPv4 address; nothing was done",
    {
      why: "Liqo is installed with --api-server-url: the address in k3s's kubeconfig is 127.0.0.1, which Liqo refuses and NodeRings cannot reach",
      next: "give --api-server-url https://ADDRESS:6443 with an address of this machine that NodeRings reaches",
    },
  );
}

/** liqoctl, the API server URL to give Liqo, and the CIDRs NodeRings reserves (unknown before the agent exists: a dry run). */
interface LiqoObservation {
  liqoctl: ToolDecision;
  url: string | undefined;
  reserved: string[] | undefined;
}

/** 5. Liqo (NR-8): the pinned Liqo, installed with liqoctl for k3s, with reflection restricted. */
export const liqo = registerPhase({
  id: "liqo",
  title: "Liqo",
  description:
    "install the pinned Liqo with liqoctl for k3s: the same pod and service CIDRs, the API server URL NodeRings reaches, the node subnet and NodeRings' CIDRs reserved, and reflection restricted (Secrets on an allow list, no ServiceAccount tokens)",
  needs: [
    "pins",
    "network",
    "apiServer",
    "api",
    "kube",
    "wait",
    "tools",
    "runner",
    "transport",
    "onDownload",
    "onInstalled",
    "paths",
  ],
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
    reflection: [...LIQO_REFLECTION],
    apiServer: ctx.apiServer.url ?? null,
    nodeSubnet: ctx.apiServer.nodeSubnet ?? null,
  }),
  async observe(ctx, prior): Promise<LiqoObservation> {
    const liqoctl = await ctx.tools.liqoctl();
    const url = ctx.apiServer.url;
    const id = prior.known(agent, "agentId");
    const reserved = id === undefined ? undefined : (await ctx.api.getPeeringParameters(id)).network.reservedCIDRs;
    return { liqoctl, url, reserved };
  },
  plan(ctx, { prior, dryRun, observation: { liqoctl, url, reserved } }) {
    // A run is refused before it starts (register); a dry run shows what is missing.
    if (url === undefined && !dryRun) throw apiServerUnknown();
    // Liqo wants "the subnet of the cluster nodes" reserved (install.md), and NodeRings' own
    // ranges may not be used for remapping either.
    const subnets = [
      ...(ctx.apiServer.nodeSubnet === undefined ? [] : [ctx.apiServer.nodeSubnet]),
      ...(reserved ?? [placeholder("reserved CIDRs from NodeRings")]),
    ];
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
            "--api-server-url",
            url ?? placeholder("--api-server-url: this machine has no default route"),
            "--reserved-subnets",
            subnets.join(","),
            ...LIQO_REFLECTION.flatMap((value) => ["--set", value]),
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
