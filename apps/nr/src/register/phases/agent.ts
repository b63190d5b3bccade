import { BugError } from "@nodekit/errors";
import { action } from "@nodekit/plan";
import * as z from "zod";
import { registerPhase } from "../context.ts";

/** What the agent phase found in NodeRings before planning. */
type AgentObservation = { exists: true; id: string; name: string; state: string } | { exists: false; name: string };

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
  needs: ["api", "identity", "arch"],
  uses: {},
  outputs: AgentOutputs,
  inputs: (ctx) => ({ name: ctx.identity.name ?? null, agentId: ctx.identity.agentId ?? null }),
  async observe(ctx): Promise<AgentObservation> {
    if (ctx.identity.agentId !== undefined) {
      const found = await ctx.api.getAgent(ctx.identity.agentId);
      return { exists: true, id: found.id, name: found.name, state: found.state };
    }
    const name = ctx.identity.name;
    if (name === undefined) throw new BugError("the agent phase needs a name or an id");
    const found = await ctx.api.findAgentByName(name);
    return found === undefined
      ? { exists: false, name }
      : { exists: true, id: found.id, name: found.name, state: found.state };
  },
  plan(ctx, { observation: seen }) {
    if (seen.exists) {
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
        `create agent ${seen.name} (${ctx.arch}) in NodeRings; a retried or repeated create reuses it, never a duplicate`,
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
      const { agent: made, created } = await ctx.api.ensureAgent({ name: io.observation.name, architecture: ctx.arch });
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
