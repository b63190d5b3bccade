import { BugError, UserError } from "@nodekit/errors";
import type { Agent } from "@nodekit/noderings-api";
import { action } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "../../errors.ts";
import { registerPhase } from "../context.ts";

/** What the agent phase found in NodeRings before planning, and this machine's identity (null: none). */
type AgentObservation = (
  | { exists: true; id: string; name: string; state: string; machineId: string | undefined }
  | { exists: false; name: string }
) & { machine: string | null };

/**
 * What the agent phase records. The cluster id is the agent's name: a record without one
 * (written before it was recorded) reads as the name.
 */
const AgentOutputs = z
  .strictObject({
    agentId: z.string().min(1),
    name: z.string().min(1),
    clusterId: z.string().min(1).optional(),
    /** Whether this run created it (false: it existed). */
    created: z.boolean().optional(),
  })
  .transform((recorded) => ({ ...recorded, clusterId: recorded.clusterId ?? recorded.name }));

/** 1. Agent record (NR-2): create the agent in NodeRings, or reuse it. */
export const agent = registerPhase({
  id: "agent",
  title: "Agent record",
  description: "create the agent in NodeRings, or reuse it (--name / --agent-id)",
  needs: ["api", "identity", "arch", "host"],
  uses: {},
  outputs: AgentOutputs,
  inputs: (ctx) => ({ name: ctx.identity.name ?? null, agentId: ctx.identity.agentId ?? null }),
  async observe(ctx): Promise<AgentObservation> {
    const { machineId: machine } = await ctx.host.facts();
    const seen = (found: Agent) =>
      ({
        exists: true,
        id: found.id,
        name: found.name,
        state: found.state,
        machineId: found.machineId,
        machine,
      }) as const;
    if (ctx.identity.agentId !== undefined) return seen(await ctx.api.getAgent(ctx.identity.agentId));
    const name = ctx.identity.name;
    if (name === undefined) throw new BugError("the agent phase needs a name or an id");
    const found = await ctx.api.findAgentByName(name);
    return found === undefined ? { exists: false, name, machine } : seen(found);
  },
  plan(ctx, { observation: seen }) {
    if (seen.exists) {
      // One agent, one machine: another VM given the same --name does not take it over.
      if (seen.machineId !== undefined && seen.machineId !== seen.machine) {
        throw new UserError(
          errorCodes.AGENT_OTHER_MACHINE,
          `agent ${seen.name} (${seen.id}) was registered from another machine; nothing was done`,
          {
            why:
              seen.machine === null
                ? "this machine has no /etc/machine-id to tell it from the one that registered the agent"
                : "NodeRings records the machine that registered an agent (a keyed hash of its /etc/machine-id), and this is not that machine",
            facts: { agent: seen.id },
          },
        );
      }
      return [
        action("reuse-agent", `reuse agent ${seen.name} (${seen.id}, ${seen.state}) in NodeRings`, {
          mutates: false,
          params: { id: seen.id, name: seen.name },
        }),
      ];
    }
    return [
      action(
        "create-agent",
        `create agent ${seen.name} (${ctx.arch}${seen.machine === null ? "" : ", this machine's identity"}) in NodeRings; a retried or repeated create reuses it, never a duplicate`,
        { mutates: true, params: { name: seen.name, architecture: ctx.arch } },
      ),
    ];
  },
  actions: {
    "reuse-agent": async (_ctx, _step, io) => {
      const seen = io.observation;
      if (!seen.exists) throw new BugError("reuse-agent planned for an agent that does not exist");
      io.set("agentId", seen.id);
      io.set("name", seen.name);
      io.set("clusterId", seen.name);
      io.set("created", false);
    },
    "create-agent": async (ctx, _step, io) => {
      const { machine } = io.observation;
      const { agent: made, created } = await ctx.api.ensureAgent({
        name: io.observation.name,
        architecture: ctx.arch,
        ...(machine === null ? {} : { machineId: machine }),
      });
      // Created by another machine between the look-up and the create (its 409 resolved to it).
      if (!created && made.machineId !== undefined && made.machineId !== machine) {
        throw new UserError(
          errorCodes.AGENT_OTHER_MACHINE,
          `agent ${made.name} (${made.id}) was registered from another machine; nothing was done`,
          { facts: { agent: made.id } },
        );
      }
      io.set("agentId", made.id);
      io.set("name", made.name);
      io.set("clusterId", made.name);
      io.set("created", created);
    },
  },
  preview: (_ctx, { observation: seen }) =>
    seen.exists
      ? { agentId: seen.id, name: seen.name, clusterId: seen.name }
      : { name: seen.name, clusterId: seen.name },
  async probe(ctx, recorded) {
    const found = await ctx.api.getAgent(recorded.agentId);
    return found.id === recorded.agentId
      ? { ok: true }
      : { ok: false, reason: `agent ${recorded.agentId} is not in NodeRings` };
  },
});
