import { UserError } from "@nodekit/errors";
import { KUBE_TOOLS, probeTool } from "@nodekit/kube";
import type { PeeringParameters } from "@nodekit/noderings-api";
import { action } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "../../errors.ts";
import {
  assessHost,
  type HostFacts,
  hostProblems,
  type PortSpec,
  REQUIRED_PORTS,
  REQUIREMENTS,
} from "../../services/host.ts";
import { registerPhase } from "../context.ts";
import { agent } from "./agent.ts";

/**
 * The host's facts, the CIDRs NodeRings reserves and the Liqo gateway's port (null before the
 * agent exists: a dry run), and the version of the kubectl on PATH (null: none).
 */
interface PrecheckObservation {
  facts: HostFacts;
  reserved: readonly string[] | null;
  gateway: PortSpec[];
  kubectl: string | null;
}

/** 2. Prechecks (NR-3): OS, kernel, architecture, systemd, kubectl, ports, disk, memory; read-only. */
export const prechecks = registerPhase({
  id: "prechecks",
  title: "Prechecks",
  description:
    "OS, kernel, architecture, systemd, an old kubectl, free ports (k3s, Calico, Liqo), disk and memory (unless --skip-prechecks; one by one with --ignore-precheck)",
  needs: ["host", "skipPrechecks", "ignorePrechecks", "warn", "network", "api", "runner"],
  uses: {},
  outputs: z.strictObject({
    checks: z.array(z.string()),
    /** The failed checks --ignore-precheck let pass. */
    ignored: z.array(z.string()).optional(),
  }),
  invalidatesLater: false,
  guard: (ctx) => (ctx.skipPrechecks ? "--skip-prechecks" : undefined),
  inputs: (ctx) => ({
    requirements: { ...REQUIREMENTS },
    ports: REQUIRED_PORTS.map((p) => `${p.port}/${p.protocol}`),
    network: { ...ctx.network },
    ...(ctx.ignorePrechecks.length === 0 ? {} : { ignore: [...ctx.ignorePrechecks].sort() }),
  }),
  async observe(ctx, prior): Promise<PrecheckObservation> {
    const agentId = prior.known(agent, "agentId");
    const parameters = agentId === undefined ? undefined : await ctx.api.getPeeringParameters(agentId);
    const gateway = parameters === undefined ? [] : gatewayPorts(parameters);
    const facts = await ctx.host.facts({ ports: gateway });
    // The kubectl nr's steps run: the first on PATH (k3s links its own only when there is none).
    const probe = await probeTool(ctx.runner, KUBE_TOOLS.kubectl);
    const kubectl = probe.found ? (probe.version ?? "of unknown version") : null;
    return { facts, reserved: parameters?.network.reservedCIDRs ?? null, gateway, kubectl };
  },
  plan: (ctx) => [
    action(
      "check-host",
      `check this machine: OS, kernel ≥ ${REQUIREMENTS.minKernel}, ${REQUIREMENTS.architectures.join("/")}, root, systemd as PID 1, no kubectl older than 1.31 on PATH, ports ${REQUIRED_PORTS.map((p) => `${p.port}/${p.protocol}`).join(" ")} free (and Liqo's gateway server's, when it runs on this node), ≥ ${REQUIREMENTS.minDiskBytes / 1024 ** 3} GiB disk, ≥ ${REQUIREMENTS.minMemoryBytes / 1024 ** 3} GiB memory, pod ${ctx.network.podCidr} and service ${ctx.network.serviceCidr} CIDRs clear of NodeRings' reserved ones${ctx.ignorePrechecks.length === 0 ? "" : `; a failure of ${ctx.ignorePrechecks.join(", ")} is only reported (--ignore-precheck)`}`,
      { mutates: false },
    ),
  ],
  actions: {
    "check-host": async (ctx, _step, io) => {
      const seen = io.observation;
      const checks = assessHost(seen.facts, REQUIREMENTS, {
        network: seen.reserved === null ? undefined : { plan: ctx.network, reserved: seen.reserved },
        ports: seen.gateway,
        kubectl: seen.kubectl,
      });
      const failed = checks.filter((entry) => !entry.ok);
      const ignored = failed.filter((entry) => ctx.ignorePrechecks.includes(entry.id));
      const problems = hostProblems(checks.filter((entry) => !ignored.includes(entry)));
      if (problems.length > 0) {
        throw new UserError(
          errorCodes.PRECHECKS_FAILED,
          `${problems.length} of ${checks.length} prechecks failed; nothing was installed`,
          // What to do comes from nr's hint for the code: a phase failure keeps its problems, not its next steps.
          { problems },
        );
      }
      for (const entry of ignored)
        ctx.warn(`precheck ${entry.id} failed and was let pass (--ignore-precheck): found ${entry.found}`);
      io.set(
        "checks",
        checks.map((entry) => `${entry.id}: ${entry.found}`),
      );
      if (ignored.length > 0)
        io.set(
          "ignored",
          ignored.map((entry) => `${entry.id}: found ${entry.found}`),
        );
    },
  },
});

/**
 * The host ports Liqo's WireGuard gateway server takes on this machine, for the peerings
 * NodeRings' parameters describe. The server runs on the side `serverLocation` names — the
 * agent is the consumer of the outbound peering and the provider of the inbound one — and
 * only a LoadBalancer Service takes its port on the node: k3s's ServiceLB answers it with a
 * hostPort on each node (docs.k3s.io networking/networking-services, "Service Load
 * Balancer"); a NodePort one gets a port Kubernetes allocates from its NodePort range, which
 * nothing can check before. Where the agent only dials out (NodeRings runs the server, the
 * platform's default), nothing on this machine listens (liqotech/liqo@v1.0.1
 * docs/installation/requirements.md, "Connectivity").
 */
export function gatewayPorts(parameters: {
  gateway: PeeringParameters["gateway"];
  inbound: Pick<PeeringParameters["inbound"], "gateway">;
}): PortSpec[] {
  const served = [
    { gateway: parameters.gateway, agentSide: "Consumer", direction: "outbound" },
    { gateway: parameters.inbound.gateway, agentSide: "Provider", direction: "inbound" },
  ].filter((entry) => entry.gateway.serverLocation === entry.agentSide && entry.gateway.serviceType === "LoadBalancer");
  const ports = new Map<number, string[]>();
  for (const entry of served)
    ports.set(entry.gateway.port, [...(ports.get(entry.gateway.port) ?? []), entry.direction]);
  return [...ports].map(([port, directions]) => ({
    port,
    protocol: "udp",
    for: `Liqo's WireGuard gateway server (the ${directions.join(" and ")} peering's, a LoadBalancer on this node)`,
  }));
}

/** The ids of the prechecks, for --ignore-precheck: the fixed ones, and any port's `port-<n>-<tcp|udp>`. */
export const PRECHECK_IDS = [
  "os",
  "kernel",
  "arch",
  "user",
  "init",
  "kubectl",
  "memory",
  "disk",
  "pod-cidr",
  "service-cidr",
  "port-<number>-<tcp|udp>",
] as const;

export function isPrecheckId(id: string): boolean {
  return (PRECHECK_IDS as readonly string[]).includes(id) || /^port-\d{1,5}-(tcp|udp)$/.test(id);
}
