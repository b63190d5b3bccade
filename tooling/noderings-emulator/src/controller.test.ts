import { expect, test } from "vitest";
import {
  advance,
  type ControllerContext,
  completeInbound,
  createAgent,
  nextDueAt,
  requestInbound,
  startOutbound,
} from "./controller.ts";
import { DEFAULT_PLATFORM, emptyState } from "./state.ts";

let n = 0;
const ctx = (now: number): ControllerContext => ({
  now,
  timing: { inboundMs: 1_000 },
  platform: DEFAULT_PLATFORM,
  liqoVersion: "v1.0.1",
  newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
  newToken: () => "t",
});

/** Acme's agent "vm", created at 0, whose outbound peering started at `at`. */
function outboundStarted(at: number) {
  const state = emptyState();
  const agent = createAgent(state, "acme", { name: "vm" }, ctx(0));
  startOutbound(
    state,
    "acme",
    agent.id,
    { clusterId: "vm", liqoVersion: "v1.0.1", podCIDR: "10.42.0.0/16", serviceCIDR: "10.43.0.0/16" },
    ctx(at),
  );
  return { state, agent };
}

test("inbound peering settles when it falls due by the clock, not before, and only once", () => {
  // Given an agent whose inbound peering was asked for at t=10 000
  const { state, agent } = outboundStarted(5_000);
  requestInbound(state, "acme", agent.id, { clusterId: "vm", outbound: "Established" }, ctx(8_000));
  expect(nextDueAt(state)).toBeUndefined(); // the agent runs the reverse peering first
  completeInbound(state, "acme", agent.id, { clusterId: "vm", reversePeering: "Done" }, ctx(10_000));
  expect(nextDueAt(state)).toBe(11_000);

  // When time passes, Then nothing happens before 11 000, and at 11 000 it is Established
  expect(advance(state, 10_999)).toBe(false);
  expect(state.agents[agent.id]?.peering.inbound.state).toBe("Pending");
  expect(advance(state, 11_000)).toBe(true);
  expect(state.agents[agent.id]?.peering.inbound).toEqual({
    state: "Established",
    updatedAt: "1970-01-01T00:00:11.000Z",
  });
  expect(state.agents[agent.id]?.agent.state).toBe("Peered");
  expect(advance(state, 99_000)).toBe(false);
  expect(nextDueAt(state)).toBeUndefined();
});

test("the reverse peering is reported only after a consumer credential was issued, for the same cluster", () => {
  const { state, agent } = outboundStarted(1);
  expect(() => completeInbound(state, "acme", agent.id, { clusterId: "vm", reversePeering: "Done" }, ctx(2))).toThrow(
    "was issued no consumer credential",
  );
  const issued = requestInbound(state, "acme", agent.id, { clusterId: "vm", outbound: "Established" }, ctx(3));
  expect(issued.consumerUser.token).toBe("t");
  expect(state.agents[agent.id]?.peering.consumerUser).toEqual({
    user: "liqo-consumer-vm",
    expiresAt: expect.any(String),
  });
  expect(JSON.stringify(state)).not.toContain('"token"');
  expect(() =>
    completeInbound(state, "acme", agent.id, { clusterId: "other", reversePeering: "Done" }, ctx(4)),
  ).toThrow("peers as cluster vm, not other");
});

test("another account's agent is not found, and asking for inbound before outbound is a conflict", () => {
  const state = emptyState();
  const agent = createAgent(state, "acme", { name: "vm" }, ctx(0));
  expect(() => requestInbound(state, "other", agent.id, { clusterId: "vm", outbound: "Established" }, ctx(1))).toThrow(
    `agent ${agent.id} not found`,
  );
  expect(() => requestInbound(state, "acme", agent.id, { clusterId: "vm", outbound: "Established" }, ctx(1))).toThrow(
    'agent "vm" has no outbound peering; start outbound peering first',
  );
});
