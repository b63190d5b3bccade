import { readableMessage } from "@nodekit/documents";
import { cidrsOverlap } from "@nodekit/emulator-kit";
import { formatPath } from "@nodekit/errors";
import {
  type Agent,
  type ApiErrorDetail,
  CompleteInboundPeeringRequestSchema,
  CreateAgentRequestSchema,
  CreateHealthReportRequestSchema,
  type HealthReport,
  type InboundPeering,
  type OffloadingTargets,
  type OutboundPeering,
  type PeeringParameters,
  type PeeringStatus,
  type PeeringTeardown,
  RESERVED_AGENT_NAMES,
  ReportOffloadingRequestSchema,
  RequestInboundPeeringRequestSchema,
  StartOutboundPeeringRequestSchema,
  TeardownPeeringRequestSchema,
} from "@nodekit/noderings-api";
import type * as z from "zod";
import { ApiError, conflict, invalid, notFound } from "./api-error.ts";
import { type AgentRecord, type EmulatorState, iso, type Platform, type Timing } from "./state.ts";

// The emulated platform's rules, as pure functions over the state: each takes the state,
// the caller's account and the request, changes the state, and returns the answer, or
// throws an ApiError with the service's message. Time comes in through the context.

export interface ControllerContext {
  now: number;
  timing: Timing;
  platform: Platform;
  /** The Liqo version the platform runs (its pins'). */
  liqoVersion: string;
  newId: () => string;
  /** A fresh one-time peering-user token. */
  newToken: () => string;
}

/** Validates a request body like the service does: every problem, each with its field. */
function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const result = schema.safeParse(body, { error: readableMessage });
  if (result.success) return result.data;
  const details: ApiErrorDetail[] = result.error.issues.flatMap((issue) => {
    const path = issue.path.filter((segment): segment is string | number => typeof segment !== "symbol");
    if (issue.code === "unrecognized_keys")
      return issue.keys.map((key) => ({ field: formatPath([...path, key]), message: "is not a known field" }));
    return [{ field: formatPath(path), message: issue.message }];
  });
  const first = details[0];
  throw invalid(
    details.length === 1 && first !== undefined
      ? `invalid ${what}: ${first.field === "" ? "" : `${first.field} `}${first.message}`
      : `invalid ${what}: ${details.length} problems`,
    details,
  );
}

/**
 * A request about one of the account's agents: its record (404 when the account has no such
 * agent), then the body parsed with `schema` (`what` names it in a 400), then `handle`.
 */
function agentRequest<S extends z.ZodType, T>(
  schema: S,
  what: string,
  handle: (record: AgentRecord, request: z.output<S>, ctx: ControllerContext) => T,
): (state: EmulatorState, account: string, id: string, body: unknown, ctx: ControllerContext) => T {
  return (state, account, id, body, ctx) =>
    handle(getAgentRecord(state, account, id), parseBody(schema, body, what), ctx);
}

export function agentsOf(state: EmulatorState, account: string): AgentRecord[] {
  return Object.values(state.agents).filter((record) => record.account === account);
}

/** An agent of this account; another account's agent is as absent as a missing one. */
export function getAgentRecord(state: EmulatorState, account: string, id: string): AgentRecord {
  const record = state.agents[id];
  if (record === undefined || record.account !== account) throw notFound(`agent ${id} not found`);
  return record;
}

export function createAgent(state: EmulatorState, account: string, body: unknown, ctx: ControllerContext): Agent {
  const request = parseBody(CreateAgentRequestSchema, body, "agent");
  if ((RESERVED_AGENT_NAMES as readonly string[]).includes(request.name) || request.name.startsWith("nr-system")) {
    throw new ApiError("name_reserved", `agent name "${request.name}" is reserved; choose another name`, {
      details: [{ field: "name", message: "is reserved" }],
    });
  }
  const taken = agentsOf(state, account).find((record) => record.agent.name === request.name);
  if (taken !== undefined) {
    throw new ApiError("name_taken", `agent "${request.name}" already exists (${taken.agent.id})`, {
      details: [{ field: "name", message: `is taken by agent ${taken.agent.id}` }],
    });
  }
  const id = ctx.newId();
  const at = iso(ctx.now);
  const agent: Agent = {
    id,
    name: request.name,
    ...(request.description === undefined ? {} : { description: request.description }),
    labels: request.labels ?? {},
    ...(request.architecture === undefined ? {} : { architecture: request.architecture }),
    ...(request.machineId === undefined ? {} : { machineId: request.machineId }),
    state: "Registered",
    createdAt: at,
    updatedAt: at,
  };
  state.agents[id] = {
    account,
    agent,
    peering: { outbound: { state: "None" }, inbound: { state: "None" } },
    offloading: { offloaded: [] },
    healthReports: [],
  };
  return agent;
}

export function peeringParameters(ctx: ControllerContext): PeeringParameters {
  const { platformClusterId, network, gateway, resources, inBand, inbound } = ctx.platform;
  return { platformClusterId, liqoVersion: ctx.liqoVersion, network, gateway, resources, inBand, inbound };
}

export function peeringStatus(record: AgentRecord, ctx: ControllerContext): PeeringStatus {
  return {
    agentId: record.agent.id,
    ...(record.peering.clusterId === undefined ? {} : { clusterId: record.peering.clusterId }),
    platformClusterId: ctx.platform.platformClusterId,
    outbound: record.peering.outbound,
    inbound: record.peering.inbound,
  };
}

/** A request naming another cluster than the agent's peering is a conflict (while it has one). */
function requireSameCluster(record: AgentRecord, clusterId: string): void {
  const peered = record.peering.clusterId;
  if (peered !== undefined && peered !== clusterId) {
    throw conflict(`agent "${record.agent.name}" peers as cluster ${peered}, not ${clusterId}`, [
      { field: "clusterId", message: `must be ${peered}, as in the outbound peering` },
    ]);
  }
}

/**
 * A one-time peering user of the platform's cluster, valid for an hour: what the state
 * records (`record`) and what the agent is handed once (`credential()`, a fresh token).
 */
function oneTimeUser(ctx: ControllerContext, prefix: "liqo-peer" | "liqo-consumer", clusterId: string) {
  const user = `${prefix}-${clusterId}`.slice(0, 63);
  const expiresAt = iso(ctx.now + 60 * 60 * 1000);
  return {
    record: { user, expiresAt },
    credential: () => ({
      server: ctx.platform.peeringServer,
      certificateAuthorityData: Buffer.from(EMULATOR_CA).toString("base64"),
      user,
      token: ctx.newToken(),
      expiresAt,
    }),
  };
}

const minor = (version: string) => version.replace(/^v/, "").split(".").slice(0, 2).join(".");

export const startOutbound = agentRequest(
  StartOutboundPeeringRequestSchema,
  "outbound peering request",
  (record, request, ctx): OutboundPeering => {
    const details: ApiErrorDetail[] = [];
    if (minor(request.liqoVersion) !== minor(ctx.liqoVersion)) {
      details.push({
        field: "liqoVersion",
        message: `must be a v${minor(ctx.liqoVersion)}.x release: the platform runs Liqo ${ctx.liqoVersion}, and Liqo peers only the same minor version`,
      });
    }
    for (const field of ["podCIDR", "serviceCIDR"] as const) {
      const reserved = ctx.platform.network.reservedCIDRs.find((cidr) => cidrsOverlap(cidr, request[field]));
      if (reserved !== undefined)
        details.push({ field, message: `overlaps ${reserved}, which the platform reserves; choose another range` });
    }
    if (cidrsOverlap(request.podCIDR, request.serviceCIDR))
      details.push({ field: "serviceCIDR", message: `overlaps podCIDR ${request.podCIDR}` });
    if (details.length > 0) {
      throw invalid(
        details.length === 1
          ? `invalid outbound peering request: ${details[0]?.field} ${details[0]?.message}`
          : `invalid outbound peering request: ${details.length} problems`,
        details,
      );
    }
    const { peering } = record;
    if (
      peering.clusterId !== undefined &&
      peering.clusterId !== request.clusterId &&
      peering.outbound.state === "Established"
    ) {
      throw conflict(
        `agent "${record.agent.name}" is peered as cluster ${peering.clusterId}; unpeer it before peering as ${request.clusterId}`,
      );
    }
    const at = iso(ctx.now);
    const peeringUser = oneTimeUser(ctx, "liqo-peer", request.clusterId);
    record.peering = {
      ...peering,
      clusterId: request.clusterId,
      liqoVersion: request.liqoVersion,
      podCIDR: request.podCIDR,
      serviceCIDR: request.serviceCIDR,
      outbound: { state: "Pending", message: "peering user issued; waiting for the agent to peer", updatedAt: at },
      inbound:
        peering.inbound.state === "Established" && peering.clusterId === request.clusterId
          ? peering.inbound
          : { state: "None", updatedAt: at },
      peeringUser: peeringUser.record,
    };
    delete record.peering.inboundDueMs;
    touch(record, ctx, record.agent.state === "Registered" ? "Peering" : record.agent.state);
    record.agent.clusterId = request.clusterId;
    return {
      ...peeringParameters(ctx),
      status: peeringStatus(record, ctx),
      peeringUser: peeringUser.credential(),
    };
  },
);

/**
 * Outbound is established (the agent says so): the platform issues a one-time consumer
 * credential for its own cluster, for the reverse `liqoctl peer` the agent runs itself
 * (NodeRings is the consumer of that direction). Inbound stays as it is when established
 * (the reverse peering is there; running it again changes nothing), else it waits for the
 * agent's report.
 */
export const requestInbound = agentRequest(
  RequestInboundPeeringRequestSchema,
  "inbound peering request",
  (record, request, ctx): InboundPeering => {
    const { peering } = record;
    if (peering.outbound.state === "None" || peering.clusterId === undefined) {
      throw conflict(`agent "${record.agent.name}" has no outbound peering; start outbound peering first`);
    }
    requireSameCluster(record, request.clusterId);
    const at = iso(ctx.now);
    if (peering.outbound.state !== "Established") peering.outbound = { state: "Established", updatedAt: at };
    const consumerUser = oneTimeUser(ctx, "liqo-consumer", request.clusterId);
    peering.consumerUser = consumerUser.record;
    if (peering.inbound.state !== "Established") {
      peering.inbound = {
        state: "Pending",
        message: "consumer credential issued; waiting for the agent to run the reverse peering",
        updatedAt: at,
      };
      delete peering.inboundDueMs;
    }
    touch(record, ctx, record.agent.state);
    return {
      status: peeringStatus(record, ctx),
      consumerUser: consumerUser.credential(),
    };
  },
);

/**
 * The agent ran the reverse `liqoctl peer`: the platform checks its side of it, which
 * settles `timing.inboundMs` later (Established, or Failed as a test asked). Before a
 * consumer credential was issued, or for another cluster id, it is a conflict.
 */
export const completeInbound = agentRequest(
  CompleteInboundPeeringRequestSchema,
  "inbound peering report",
  (record, request, ctx): PeeringStatus => {
    const { peering } = record;
    if (peering.consumerUser === undefined || peering.clusterId === undefined) {
      throw conflict(
        `agent "${record.agent.name}" was issued no consumer credential; ask for inbound peering first, then run the reverse peering`,
      );
    }
    requireSameCluster(record, request.clusterId);
    if (peering.inbound.state !== "Established") {
      peering.inbound = {
        state: "Pending",
        message: "the platform is checking the reverse peering",
        updatedAt: iso(ctx.now),
      };
      peering.inboundDueMs = ctx.now + ctx.timing.inboundMs;
      touch(record, ctx, record.agent.state);
    }
    return peeringStatus(record, ctx);
  },
);

/**
 * The agent asks to tear its peering down (`nr cluster reset`): `liqoctl unpeer` needs both
 * clusters' kubeconfigs, as `liqoctl peer` did, so the platform issues again a one-time
 * peering user (unpeering the outbound direction) and consumer credential (the reverse one).
 * Both directions are Pending until the agent reports the unpeer calls done. Without a
 * peering, or for another cluster id, it is a conflict.
 */
export const startTeardown = agentRequest(
  TeardownPeeringRequestSchema,
  "peering teardown request",
  (record, request, ctx): PeeringTeardown => {
    const { peering } = record;
    if (peering.clusterId === undefined || (peering.outbound.state === "None" && peering.inbound.state === "None")) {
      throw conflict(`agent "${record.agent.name}" has no peering to tear down`);
    }
    requireSameCluster(record, request.clusterId);
    const at = iso(ctx.now);
    const peeringUser = oneTimeUser(ctx, "liqo-peer", request.clusterId);
    const consumerUser = oneTimeUser(ctx, "liqo-consumer", request.clusterId);
    const tearing = {
      state: "Pending" as const,
      message: "tearing down: waiting for the agent to unpeer",
      updatedAt: at,
    };
    peering.outbound = tearing;
    peering.inbound = tearing;
    peering.peeringUser = peeringUser.record;
    peering.consumerUser = consumerUser.record;
    delete peering.inboundDueMs;
    touch(record, ctx, record.agent.state);
    return {
      status: peeringStatus(record, ctx),
      peeringUser: peeringUser.credential(),
      consumerUser: consumerUser.credential(),
    };
  },
);

/** The agent ran both `liqoctl unpeer` calls: both directions None, nothing offloaded; the agent is Registered again. */
export const completeTeardown = agentRequest(
  TeardownPeeringRequestSchema,
  "peering teardown report",
  (record, request, ctx): PeeringStatus => {
    requireSameCluster(record, request.clusterId);
    const at = iso(ctx.now);
    record.peering = { outbound: { state: "None", updatedAt: at }, inbound: { state: "None", updatedAt: at } };
    record.offloading = { offloaded: [], updatedAt: at };
    delete record.agent.clusterId;
    touch(record, ctx, "Registered");
    return peeringStatus(record, ctx);
  },
);

/** Deregisters an agent: refused (409) while either peering direction is not None. Answers it as it was. */
export function deleteAgent(state: EmulatorState, account: string, id: string, ctx: ControllerContext): Agent {
  const record = getAgentRecord(state, account, id);
  const { outbound, inbound } = record.peering;
  if (outbound.state !== "None" || inbound.state !== "None") {
    throw conflict(
      `agent "${record.agent.name}" is still peered (outbound ${outbound.state}, inbound ${inbound.state}); tear the peering down before deregistering it`,
    );
  }
  delete state.agents[id];
  return { ...record.agent, updatedAt: iso(ctx.now) };
}

export function offloadingTargets(record: AgentRecord, ctx: ControllerContext): OffloadingTargets {
  return {
    agentId: record.agent.id,
    required: ctx.platform.requiredNamespaces,
    optional: ctx.platform.optional,
    offloaded: record.offloading.offloaded,
    ...(record.offloading.updatedAt === undefined ? {} : { updatedAt: record.offloading.updatedAt }),
  };
}

export const reportOffloading = agentRequest(
  ReportOffloadingRequestSchema,
  "offloading report",
  (record, { namespaces }, ctx): OffloadingTargets => {
    if (record.peering.outbound.state === "None") {
      throw conflict(
        `agent "${record.agent.name}" has no outbound peering; namespaces are offloaded over it, so peer first`,
      );
    }
    const details: ApiErrorDetail[] = [];
    for (const required of ctx.platform.requiredNamespaces) {
      if (!namespaces.includes(required.name)) {
        details.push({
          field: "namespaces",
          message: `must include ${required.name}, which the platform needs${required.purpose === undefined ? "" : ` for the ${required.purpose}`}`,
        });
      }
    }
    const seen = new Set<string>();
    namespaces.forEach((name, index) => {
      if (ctx.platform.optional.forbidden.includes(name))
        details.push({ field: `namespaces.${index}`, message: `${name} may not be offloaded` });
      if (seen.has(name)) details.push({ field: `namespaces.${index}`, message: `${name} is named twice` });
      seen.add(name);
    });
    const optional = namespaces.filter((name) => !ctx.platform.requiredNamespaces.some((r) => r.name === name));
    if (optional.length > ctx.platform.optional.max) {
      details.push({
        field: "namespaces",
        message: `names ${optional.length} optional namespaces; at most ${ctx.platform.optional.max} may be offloaded`,
      });
    }
    if (details.length > 0)
      throw invalid(
        `invalid offloading report: ${details.length === 1 ? `${details[0]?.field} ${details[0]?.message}` : `${details.length} problems`}`,
        details,
      );
    record.offloading = { offloaded: [...namespaces], updatedAt: iso(ctx.now) };
    touch(record, ctx, record.agent.state);
    return offloadingTargets(record, ctx);
  },
);

export const createHealthReport = agentRequest(
  CreateHealthReportRequestSchema,
  "health report",
  (record, request, ctx): HealthReport => {
    const failed = request.checks.filter((check) => check.result === "fail");
    if (request.result === "pass" && failed.length > 0) {
      throw invalid(`invalid health report: result is pass, but ${failed.map((c) => c.id).join(", ")} failed`, [
        { field: "result", message: `must be fail: check ${failed[0]?.id} failed` },
      ]);
    }
    const agentState = request.result === "pass" ? "Ready" : "Degraded";
    const report: HealthReport = {
      id: ctx.newId(),
      agentId: record.agent.id,
      result: request.result,
      checks: request.checks,
      observedAt: request.observedAt,
      receivedAt: iso(ctx.now),
      agentState,
    };
    record.healthReports = [...record.healthReports, report].slice(-20);
    touch(record, ctx, agentState);
    return report;
  },
);

/** Settles what fell due by `now`; true when anything changed. */
export function advance(state: EmulatorState, now: number): boolean {
  let changed = false;
  for (const record of Object.values(state.agents)) {
    const { peering } = record;
    if (peering.inbound.state !== "Pending" || peering.inboundDueMs === undefined || peering.inboundDueMs > now)
      continue;
    const at = iso(peering.inboundDueMs);
    if (peering.inboundFailure !== undefined) {
      peering.inbound = { state: "Failed", message: peering.inboundFailure, updatedAt: at };
      delete peering.inboundFailure;
    } else {
      peering.inbound = { state: "Established", updatedAt: at };
      if (record.agent.state === "Registered" || record.agent.state === "Peering") record.agent.state = "Peered";
    }
    delete peering.inboundDueMs;
    record.agent.updatedAt = at;
    changed = true;
  }
  return changed;
}

/** When the next transition falls due, if any. */
export function nextDueAt(state: EmulatorState): number | undefined {
  const due = Object.values(state.agents)
    .map((record) => (record.peering.inbound.state === "Pending" ? record.peering.inboundDueMs : undefined))
    .filter((ms): ms is number => ms !== undefined);
  return due.length === 0 ? undefined : Math.min(...due);
}

/** Drops idempotency records older than a day, as a real service's store expires them. */
export function pruneIdempotency(state: EmulatorState, now: number): void {
  for (const [key, record] of Object.entries(state.idempotency))
    if (now - record.createdMs > 24 * 60 * 60 * 1000) delete state.idempotency[key];
}

function touch(record: AgentRecord, ctx: ControllerContext, next: Agent["state"]): void {
  record.agent.state = next;
  record.agent.updatedAt = iso(ctx.now);
}

/** A placeholder CA for the emulated peering API server; nothing ever connects to it. */
const EMULATOR_CA =
  "-----BEGIN CERTIFICATE-----\nTk9ERVJJTkdTIEVNVUxBVE9SIFBMQUNFSE9MREVSIENB\n-----END CERTIFICATE-----\n";
