import { UserError } from "@nodekit/errors";
import { action } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "../../errors.ts";
import { assessHost, type HostFacts, hostProblems, REQUIRED_PORTS, REQUIREMENTS } from "../../services/host.ts";
import { registerPhase } from "../context.ts";
import { agent } from "./agent.ts";

/** The host's facts, and the CIDRs NodeRings reserves (null before the agent exists: a dry run). */
interface PrecheckObservation {
  facts: HostFacts;
  reserved: readonly string[] | null;
}

/** 2. Prechecks (NR-3): OS, kernel, architecture, ports, disk, memory; read-only. */
export const prechecks = registerPhase({
  id: "prechecks",
  title: "Prechecks",
  description: "OS, kernel, architecture, free ports, disk and memory (unless --skip-prechecks)",
  needs: ["host", "skipPrechecks", "network", "api"],
  uses: {},
  outputs: z.strictObject({ checks: z.array(z.string()) }),
  invalidatesLater: false,
  guard: (ctx) => (ctx.skipPrechecks ? "--skip-prechecks" : undefined),
  inputs: (ctx) => ({
    requirements: { ...REQUIREMENTS },
    ports: REQUIRED_PORTS.map((p) => `${p.port}/${p.protocol}`),
    network: { ...ctx.network },
  }),
  async observe(ctx, prior): Promise<PrecheckObservation> {
    const facts = await ctx.host.facts();
    const agentId = prior.known(agent, "agentId");
    const reserved = agentId === undefined ? null : (await ctx.api.getPeeringParameters(agentId)).network.reservedCIDRs;
    return { facts, reserved };
  },
  plan: (ctx) => [
    action(
      "check-host",
      `check this machine: OS, kernel ≥ ${REQUIREMENTS.minKernel}, ${REQUIREMENTS.architectures.join("/")}, root, ports ${REQUIRED_PORTS.map((p) => `${p.port}/${p.protocol}`).join(" ")} free, ≥ ${REQUIREMENTS.minDiskBytes / 1024 ** 3} GiB disk, ≥ ${REQUIREMENTS.minMemoryBytes / 1024 ** 3} GiB memory, pod ${ctx.network.podCidr} and service ${ctx.network.serviceCidr} CIDRs clear of NodeRings' reserved ones`,
      { mutates: false },
    ),
  ],
  actions: {
    "check-host": async (ctx, _step, io) => {
      const seen = io.observation;
      const checks = assessHost(
        seen.facts,
        REQUIREMENTS,
        seen.reserved === null ? undefined : { plan: ctx.network, reserved: seen.reserved },
      );
      const problems = hostProblems(checks);
      if (problems.length > 0) {
        throw new UserError(
          errorCodes.PRECHECKS_FAILED,
          `${problems.length} of ${checks.length} prechecks failed; nothing was installed`,
          {
            problems,
            next: "fix each one above and run again (or, if you checked them yourself, skip the prechecks)",
          },
        );
      }
      io.set(
        "checks",
        checks.map((entry) => `${entry.id}: ${entry.found}`),
      );
    },
  },
});
