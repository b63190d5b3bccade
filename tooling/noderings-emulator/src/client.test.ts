// The NodeRings API client (@nodekit/noderings-api) against the running emulator, over loopback.
import { execFileSync } from "node:child_process";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { inspect } from "node:util";
import { ExitCode, formatProblem, formatUserError, type UserError } from "@nodekit/errors";
import {
  createNodeRingsClient,
  downloadArtifact,
  type NodeRingsClientOptions,
  nodeRingsErrorCodes,
  renderPeeringKubeconfig,
} from "@nodekit/noderings-api";
import { tempDir, userErrorOf } from "@nodekit/test-utils";
import { fetchPins, requireArtifact, versionPinsErrorCodes } from "@nodekit/version-pins";
import { x as extract } from "tar";
import { afterEach, describe, expect, test } from "vitest";
import { type NodeRingsEmulatorOptions, type RunningNodeRingsEmulator, startNodeRingsEmulator } from "./index.ts";
import { outboundRequest } from "./test-support.ts";

const TOKEN = "nrt_CANARY_7f3a9c1e5b";
const running: RunningNodeRingsEmulator[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((emulator) => emulator.stop()));
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function start(options: NodeRingsEmulatorOptions = {}): Promise<RunningNodeRingsEmulator> {
  const emulator = await startNodeRingsEmulator({ tokens: [{ token: TOKEN, account: "acme" }], ...options });
  running.push(emulator);
  return emulator;
}

const logLines: string[] = [];
function client(emulator: RunningNodeRingsEmulator, options: Partial<NodeRingsClientOptions> = {}) {
  return createNodeRingsClient({
    baseUrl: emulator.url,
    token: TOKEN,
    timeoutMs: 2_000,
    retry: { limit: 2, backoffMs: 10 },
    log: (line) => logLines.push(line),
    ...options,
  });
}

const countOf = (emulator: RunningNodeRingsEmulator, method: string, path: string) =>
  emulator.requests.filter((r) => r.method === method && r.path === path).length;

describe("agents", () => {
  test("a create whose answer is lost is retried with the same Idempotency-Key, and makes one agent", async () => {
    // Given an emulator that carries out the first create but drops its answer
    const emulator = await start();
    emulator.chaos("lose-response", { method: "POST", path: "/api/v1/agents" });
    const api = client(emulator);

    // When the agent is created
    const agent = await api.createAgent({ name: "vm-1" });

    // Then the retry was answered with the first answer: one agent, two attempts with one key
    const posts = emulator.requests.filter((r) => r.method === "POST" && r.path === "/api/v1/agents");
    expect(posts.map((p) => [p.status, p.replayed ?? false])).toEqual([
      [0, false],
      [201, true],
    ]);
    expect(new Set(posts.map((p) => p.idempotencyKey)).size).toBe(1);
    expect((await api.findAgentByName("vm-1"))?.id).toBe(agent.id);
    expect(Object.keys(emulator.state.agents)).toHaveLength(1);
  });

  test("a create that times out while the service is still carrying it out is retried until its answer is replayed", async () => {
    // Given a service that takes 1.5 s to create an agent, and a client that waits 200 ms
    const emulator = await start();
    emulator.chaos("slow", { method: "POST", path: "/api/v1/agents", delayMs: 1_500 });
    const api = client(emulator, { timeoutMs: 200, retry: { limit: 8, backoffMs: 50 } });

    // When the agent is created
    const agent = await api.createAgent({ name: "vm-slow" });

    // Then the retries met the first attempt still running (409 in use), and then its answer, replayed
    const statuses = emulator.requests
      .filter((r) => r.method === "POST" && r.path === "/api/v1/agents")
      .map((r) => (r.replayed ? "replayed" : r.status));
    expect(statuses).toContain(409);
    expect(statuses.at(-1)).toBe("replayed");
    expect(Object.values(emulator.state.agents).map((r) => r.agent.id)).toEqual([agent.id]);
  });

  test("a create that fails with 503 before it is carried out is retried and succeeds", async () => {
    const emulator = await start();
    emulator.chaos("json503", { method: "POST", path: "/api/v1/agents", retryAfterSeconds: 0 });
    const agent = await client(emulator).createAgent({ name: "vm-2" });
    expect(agent.state).toBe("Registered");
    expect(countOf(emulator, "POST", "/api/v1/agents")).toBe(2);
    expect(Object.keys(emulator.state.agents)).toHaveLength(1);
  });

  test("ensureAgent reuses the agent with that name; a second create of the name is a conflict with the service's message", async () => {
    const emulator = await start();
    const api = client(emulator);
    const first = await api.ensureAgent({ name: "vm-3" });
    const second = await api.ensureAgent({ name: "vm-3" });
    expect([first.created, second.created]).toEqual([true, false]);
    expect(second.agent.id).toBe(first.agent.id);

    const error = await userErrorOf(api.createAgent({ name: "vm-3" }));
    expect(error.code).toBe(nodeRingsErrorCodes.NODERINGS_CONFLICT.code);
    expect(error.exitCode).toBe(ExitCode.Conflict);
    expect(error.message).toBe(`agent "vm-3" already exists (${first.agent.id})`);
    expect(error.facts).toMatchObject({ status: 409, serviceCode: "name_taken" });
    expect(Object.keys(emulator.state.agents)).toHaveLength(1);
  });

  test("a name the API refuses is Rejected, with its message verbatim and each field as a problem", async () => {
    const emulator = await start();
    const api = client(emulator);
    const reserved = await userErrorOf(api.createAgent({ name: "admin" }));
    expect(reserved.code).toBe("NODERINGS_REJECTED");
    expect(reserved.exitCode).toBe(ExitCode.Rejected);
    expect(reserved.message).toBe('agent name "admin" is reserved; choose another name');
    expect(reserved.problems.map(formatProblem)).toEqual(["POST /api/v1/agents: field name: is reserved"]);

    const bad = await userErrorOf(api.createAgent({ name: "Bad_Name" }));
    expect(bad.problems.map(formatProblem)).toEqual([
      "POST /api/v1/agents: field name: must consist of lower case letters, digits and '-', and start and end with a letter or digit",
    ]);
    // A refusal is not retried: the same request would be refused again.
    expect(countOf(emulator, "POST", "/api/v1/agents")).toBe(2);
  });

  test("getAgentByName of a missing agent is AGENT_NOT_FOUND; another account's agent is invisible", async () => {
    const emulator = await start({
      tokens: [
        { token: TOKEN, account: "acme" },
        { token: "other-token", account: "other" },
      ],
    });
    await client(emulator, { token: "other-token" }).createAgent({ name: "theirs" });
    const error = await userErrorOf(client(emulator).getAgentByName("theirs"));
    expect(error.code).toBe("AGENT_NOT_FOUND");
    expect(error.exitCode).toBe(ExitCode.NotFound);
  });
});

describe("retries and failures", () => {
  test("Retry-After is honoured: the client waits as asked, so the rate limiter lets the retry through", async () => {
    // Given a rate limiter that answers 429 with Retry-After: 1 and refuses anyone who comes back sooner
    const emulator = await start();
    emulator.chaos("rate-limit", { method: "GET", path: "/api/v1/agents", retryAfterSeconds: 1 });

    // When a read is made with a 10 ms backoff (which alone would come back far too soon)
    const agent = await client(emulator, { retry: { limit: 3, backoffMs: 10 } }).findAgentByName("none");

    // Then exactly one retry was made, and it was let through
    expect(agent).toBeUndefined();
    expect(emulator.requests.filter((r) => r.path === "/api/v1/agents").map((r) => r.status)).toEqual([429, 200]);
  });

  test("a Retry-After longer than the client waits fails at once, saying how long the service asked for", async () => {
    const emulator = await start();
    emulator.chaos("rate-limit", { retryAfterSeconds: 120 });
    const error = await userErrorOf(
      client(emulator, { retry: { maxRetryAfterMs: 5_000 } }).getAgent("00000000-0000-4000-8000-000000000000"),
    );
    expect(error.code).toBe("NODERINGS_RATE_LIMITED");
    expect(error.message).toBe("too many requests; slow down");
    expect(error.why).toMatch(/asking to wait 120 s, longer than this client waits \(5 s\)/);
    expect(emulator.requests).toHaveLength(1);
  });

  test("a 500 with a proxy's HTML page is a bad response showing what came back", async () => {
    const emulator = await start();
    emulator.chaos("html500", { count: 3 });
    const error = await userErrorOf(client(emulator).findAgentByName("x"));
    expect(error.code).toBe("NODERINGS_BAD_RESPONSE");
    expect(error.exitCode).toBe(ExitCode.Unreachable);
    expect(error.message).toMatch(
      /\(HTTP 500, text\/html\) is not the NodeRings API's error body: 500 Internal Server Error 500 Internal Server Error nginx$/,
    );
    expect(emulator.requests).toHaveLength(3);
  });

  test("a 500 with the API's body, after the retries, shows the service's message verbatim", async () => {
    const emulator = await start();
    emulator.chaos("json500", { count: 3 });
    const error = await userErrorOf(client(emulator).findAgentByName("x"));
    expect(error.code).toBe("NODERINGS_SERVER_ERROR");
    expect(error.message).toBe("internal error: emulated failure (chaos)");
    expect(error.why).toMatch(/with 500 internal \(request req-[0-9a-f]+\), also after 2 retries$/);
  });

  test("writes other than the agent create are sent once, never retried", async () => {
    const emulator = await start();
    const api = client(emulator);
    const { agent } = await api.ensureAgent({ name: "vm-4" });
    emulator.chaos("json500", { method: "POST", path: `/api/v1/agents/${agent.id}/health-reports`, count: 3 });
    const error = await userErrorOf(
      api.postHealthReport(agent.id, {
        result: "pass",
        checks: [{ id: "k3s-node-ready", result: "pass" }],
        observedAt: new Date().toISOString(),
      }),
    );
    expect(error.code).toBe("NODERINGS_SERVER_ERROR");
    expect(error.next[0]).toMatch(/check the state with a read before retrying/);
    expect(countOf(emulator, "POST", `/api/v1/agents/${agent.id}/health-reports`)).toBe(1);
  });

  test("no answer within the deadline is a timeout; so is a body that stalls after the headers", async () => {
    const emulator = await start();
    const api = client(emulator, { timeoutMs: 300, retry: { limit: 0 } });
    emulator.chaos("hang");
    const hung = await userErrorOf(api.findAgentByName("x"));
    expect(hung.code).toBe("NODERINGS_TIMEOUT");
    expect(hung.message).toMatch(/did not answer GET \/api\/v1\/agents within 300 ms$/);

    emulator.chaos("stall");
    const stalled = await userErrorOf(api.findAgentByName("x"));
    expect(stalled.code).toBe("NODERINGS_TIMEOUT");
    expect(stalled.message).toMatch(/began to answer GET \/api\/v1\/agents but did not finish within 300 ms$/);
    expect(stalled.why).toBe("the answer's body stalled");
  });

  test("a reset connection and a refused one are Unreachable", async () => {
    const emulator = await start();
    emulator.chaos("reset");
    const reset = await userErrorOf(client(emulator, { retry: { limit: 0 } }).findAgentByName("x"));
    expect(reset.code).toBe("NODERINGS_UNREACHABLE");
    expect(reset.message).toMatch(/cannot reach the NodeRings API at http:\/\/127\.0\.0\.1:\d+: /);

    const url = emulator.url;
    await emulator.stop();
    const refused = await userErrorOf(
      createNodeRingsClient({ baseUrl: url, token: TOKEN, retry: { limit: 0 } }).healthz(),
    );
    expect(refused.message).toBe(`cannot reach the NodeRings API at ${url}: connection refused`);
  });

  test("a token the API does not know is Unauthorized with its message; no token sends nothing", async () => {
    const emulator = await start();
    const wrong = await userErrorOf(client(emulator, { token: "nope" }).findAgentByName("x"));
    expect(wrong.code).toBe("NODERINGS_UNAUTHORIZED");
    expect(wrong.exitCode).toBe(ExitCode.Unauthorized);
    expect(wrong.message).toBe("the API token is not valid: it is unknown, revoked or for another environment");

    const before = emulator.requests.length;
    const none = await userErrorOf(client(emulator, { token: async () => undefined }).findAgentByName("x"));
    expect(none.code).toBe("NODERINGS_NO_TOKEN");
    expect(emulator.requests.length).toBe(before);
  });

  test("the token appears in no error and no log line, whatever fails", async () => {
    const emulator = await start();
    const api = client(emulator, { timeoutMs: 300, retry: { limit: 1, backoffMs: 5 } });
    const errors: UserError[] = [];
    // Each mode for every attempt the client makes (a stalled body is not retried: the answer has begun).
    for (const [mode, count] of [
      ["html500", 2],
      ["json500", 2],
      ["json503", 2],
      ["hang", 2],
      ["stall", 1],
      ["reset", 2],
    ] as const) {
      emulator.chaos(mode, { count, retryAfterSeconds: 0 });
      errors.push(await userErrorOf(api.findAgentByName("x")));
    }
    errors.push(await userErrorOf(api.createAgent({ name: "admin" })));
    errors.push(await userErrorOf(api.getAgent("not-a-uuid")));
    const { agent } = await api.ensureAgent({ name: "canary" });
    errors.push(
      await userErrorOf(
        api.startOutboundPeering(agent.id, {
          clusterId: "c",
          liqoVersion: "v1.0.1",
          podCIDR: "10.100.0.0/16",
          serviceCIDR: "10.43.0.0/16",
        }),
      ),
    );
    await emulator.stop();
    errors.push(await userErrorOf(api.findAgentByName("x")));

    expect(errors.map((e) => e.code)).toEqual([
      "NODERINGS_BAD_RESPONSE",
      "NODERINGS_SERVER_ERROR",
      "NODERINGS_SERVER_ERROR",
      "NODERINGS_TIMEOUT",
      "NODERINGS_TIMEOUT",
      "NODERINGS_UNREACHABLE",
      "NODERINGS_REJECTED",
      "NODERINGS_NOT_FOUND",
      "NODERINGS_REJECTED",
      "NODERINGS_UNREACHABLE",
    ]);
    for (const error of errors) {
      expect(formatUserError(error)).not.toContain(TOKEN);
      expect(inspect(error, { depth: 20 })).not.toContain(TOKEN);
      expect(JSON.stringify(error.facts)).not.toContain(TOKEN);
    }
    expect(logLines.join("\n")).not.toContain(TOKEN);
    expect(logLines.length).toBeGreaterThan(0);
  });
});

describe("peering, offloading and health", () => {
  test("outbound, offloading, inbound (asynchronous, by the emulator's clock) and a passing health report", async () => {
    // Given an emulator on a clock the test moves
    let clock = Date.parse("2025-01-01T00:00:00Z");
    const emulator = await start({ clock: () => clock, timing: { inboundMs: 5_000 } });
    const api = client(emulator);
    const { agent } = await api.ensureAgent({ name: "vm-5", architecture: "amd64" });

    // When the agent peers outbound with the parameters from the API
    const parameters = await api.getPeeringParameters(agent.id);
    expect(parameters).toMatchObject({
      platformClusterId: "noderings-emulator",
      liqoVersion: "v1.0.1",
      gateway: { serverLocation: "Provider" },
    });
    const outbound = await api.startOutboundPeering(agent.id, outboundRequest("nr-vm-5"));
    expect(outbound.status.outbound.state).toBe("Pending");
    const kubeconfig = JSON.parse(renderPeeringKubeconfig(outbound.peeringUser)) as {
      users: Array<{ user: { token: string } }>;
    };
    expect(kubeconfig.users[0]?.user.token).toBe(outbound.peeringUser.token);

    // And offloads the required namespace and one of its own
    const targets = await api.getOffloadingTargets(agent.id);
    const names = [...targets.required.map((n) => n.name), "customer-vms"];
    expect((await api.reportOffloading(agent.id, { namespaces: names })).offloaded).toEqual([
      "nr-vnc-gateway",
      "customer-vms",
    ]);

    // And asks for inbound peering: the platform issues a one-time consumer credential for its
    // own cluster, for the reverse liqoctl peer the agent runs; nothing settles before the
    // agent reports it ran it
    const inbound = await api.requestInboundPeering(agent.id, { clusterId: "nr-vm-5", outbound: "Established" });
    expect(inbound.status.inbound.state).toBe("Pending");
    expect(inbound.consumerUser).toMatchObject({ server: outbound.peeringUser.server, user: "liqo-consumer-nr-vm-5" });
    expect(inbound.consumerUser.token).not.toBe(outbound.peeringUser.token);
    expect(parameters.inbound.gateway.serverLocation).toBe("Consumer");
    clock += 60_000;
    await emulator.reconcile();
    expect((await api.getPeeringStatus(agent.id)).inbound.state).toBe("Pending");
    // Then reports the reverse peering done, and waits (each wait moves the clock)
    expect(
      (await api.completeInboundPeering(agent.id, { clusterId: "nr-vm-5", reversePeering: "Done" })).inbound.state,
    ).toBe("Pending");
    const sleeps: number[] = [];
    const status = await api.waitForInboundPeering(agent.id, {
      intervalMs: 2_000,
      now: () => clock,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
        await emulator.reconcile();
      },
    });

    // Then inbound was established when its time came, not before
    expect(status.inbound.state).toBe("Established");
    expect(sleeps).toEqual([2_000, 2_000, 2_000]);
    expect((await api.getAgent(agent.id)).state).toBe("Peered");

    // And a passing health report makes the agent Ready
    const report = await api.postHealthReport(agent.id, {
      result: "pass",
      checks: [{ id: "liqo-inbound", result: "pass" }],
      observedAt: new Date(clock).toISOString(),
    });
    expect(report.agentState).toBe("Ready");
  });

  test("an inbound peering the platform fails is PEERING_FAILED with its message; a wait that runs out is PEERING_TIMEOUT", async () => {
    let clock = 1_000_000;
    const emulator = await start({ clock: () => clock, timing: { inboundMs: 60_000 } });
    const api = client(emulator);
    const wait = {
      intervalMs: 1_000,
      timeoutMs: 5_000,
      now: () => clock,
      sleep: async (ms: number) => {
        clock += ms;
        await emulator.reconcile();
      },
    };
    for (const name of ["vm-6", "vm-7"]) {
      const { agent } = await api.ensureAgent({ name });
      await api.startOutboundPeering(agent.id, {
        clusterId: name,
        liqoVersion: "v1.0.3",
        podCIDR: "10.42.0.0/16",
        serviceCIDR: "10.43.0.0/16",
      });
      await api.requestInboundPeering(agent.id, { clusterId: name, outbound: "Established" });
      await api.completeInboundPeering(agent.id, { clusterId: name, reversePeering: "Done" });
      if (name === "vm-6") {
        await emulator.failNextInbound(agent.id, "the gateway on the agent did not answer on UDP 51840");
        clock += 60_000;
        const failed = await userErrorOf(api.waitForInboundPeering(agent.id, wait));
        expect(failed.code).toBe("PEERING_FAILED");
        expect(failed.message).toBe("the gateway on the agent did not answer on UDP 51840");
      } else {
        const late = await userErrorOf(api.waitForInboundPeering(agent.id, wait));
        expect(late.code).toBe("PEERING_TIMEOUT");
        expect(late.why).toBe("it is still Pending: the platform is checking the reverse peering");
      }
    }
  });

  test("a wait for the inbound peering stops at once when its signal is aborted (Ctrl-C), with the signal's reason", async () => {
    const emulator = await start();
    const api = client(emulator);
    const { agent } = await api.ensureAgent({ name: "vm-abort" });
    await api.startOutboundPeering(agent.id, outboundRequest("vm-abort"));
    await api.requestInboundPeering(agent.id, { clusterId: "vm-abort", outbound: "Established" });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort("SIGTERM"), 100);
    await expect(
      api.waitForInboundPeering(agent.id, { intervalMs: 10_000, timeoutMs: 60_000, signal: controller.signal }),
    ).rejects.toBe("SIGTERM");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("the platform's rules: reserved CIDRs, another Liqo minor, a missing required namespace, a pass with a failed check", async () => {
    const emulator = await start();
    const api = client(emulator);
    const { agent } = await api.ensureAgent({ name: "vm-8" });
    const overlap = await userErrorOf(
      api.startOutboundPeering(agent.id, {
        clusterId: "vm-8",
        liqoVersion: "v1.1.0",
        podCIDR: "10.100.0.0/17",
        serviceCIDR: "10.43.0.0/16",
      }),
    );
    expect(overlap.problems.map(formatProblem)).toEqual([
      expect.stringMatching(/field liqoVersion: must be a v1\.0\.x release: the platform runs Liqo v1\.0\.1/),
      `POST /api/v1/agents/${agent.id}/peering/outbound: field podCIDR: overlaps 10.100.0.0/16, which the platform reserves; choose another range`,
    ]);
    const early = await userErrorOf(api.reportOffloading(agent.id, { namespaces: ["nr-vnc-gateway"] }));
    expect(early.code).toBe("NODERINGS_CONFLICT");
    await api.startOutboundPeering(agent.id, outboundRequest("vm-8"));
    const missing = await userErrorOf(api.reportOffloading(agent.id, { namespaces: ["kube-system"] }));
    expect(missing.problems.map((p) => p.message)).toEqual([
      "must include nr-vnc-gateway, which the platform needs for the vnc-gateway",
      "kube-system may not be offloaded",
    ]);
    const lie = await userErrorOf(
      api.postHealthReport(agent.id, {
        result: "pass",
        checks: [{ id: "calico-ready", result: "fail", message: "TigeraStatus calico: Degraded" }],
        observedAt: new Date().toISOString(),
      }),
    );
    expect(lie.message).toBe("invalid health report: result is pass, but calico-ready failed");
  });
});

describe("teardown and deregistration (nr cluster reset)", () => {
  test("a peered agent cannot be deregistered; a teardown issues both unpeer credentials, then it can", async () => {
    // Given an agent peered both ways, with a namespace offloaded
    const emulator = await start({ timing: { inboundMs: 0 } });
    const api = client(emulator);
    const { agent } = await api.ensureAgent({ name: "vm-reset", architecture: "amd64" });
    await api.startOutboundPeering(agent.id, outboundRequest("vm-reset"));
    await api.reportOffloading(agent.id, { namespaces: ["nr-vnc-gateway"] });
    await api.requestInboundPeering(agent.id, { clusterId: "vm-reset", outbound: "Established" });
    await api.completeInboundPeering(agent.id, { clusterId: "vm-reset", reversePeering: "Done" });
    await api.waitForInboundPeering(agent.id, { intervalMs: 10 });

    // When it is deregistered while peered, it is refused: the platform would keep a peering to nothing
    const refused = await userErrorOf(api.deleteAgent(agent.id));
    expect(refused.errorCode).toBe(nodeRingsErrorCodes.NODERINGS_CONFLICT);
    expect(refused.message).toContain("tear the peering down before deregistering it");
    // And a teardown for another cluster id is refused too
    expect((await userErrorOf(api.startPeeringTeardown(agent.id, { clusterId: "other" }))).errorCode).toBe(
      nodeRingsErrorCodes.NODERINGS_CONFLICT,
    );

    // When the teardown starts: two one-time credentials, one per liqoctl unpeer, both directions Pending
    const teardown = await api.startPeeringTeardown(agent.id, { clusterId: "vm-reset" });
    expect(teardown.peeringUser.user).toBe("liqo-peer-vm-reset");
    expect(teardown.consumerUser.user).toBe("liqo-consumer-vm-reset");
    expect(teardown.peeringUser.token).not.toBe(teardown.consumerUser.token);
    expect([teardown.status.outbound.state, teardown.status.inbound.state]).toEqual(["Pending", "Pending"]);

    // Then once reported done, nothing is peered or offloaded, and the agent can be deregistered
    const done = await api.completePeeringTeardown(agent.id, { clusterId: "vm-reset" });
    expect([done.outbound.state, done.inbound.state]).toEqual(["None", "None"]);
    expect((await api.getOffloadingTargets(agent.id)).offloaded).toEqual([]);
    expect((await api.deleteAgent(agent.id)).id).toBe(agent.id);
    expect(await api.findAgentByName("vm-reset")).toBeUndefined();
    expect((await userErrorOf(api.deleteAgent(agent.id))).errorCode).toBe(nodeRingsErrorCodes.NODERINGS_NOT_FOUND);
    // And a peering teardown of an unpeered agent is a conflict, not a second set of credentials
    const again = await api.ensureAgent({ name: "vm-reset-2", architecture: "amd64" });
    expect(
      (await userErrorOf(api.startPeeringTeardown(again.agent.id, { clusterId: "vm-reset-2" }))).message,
    ).toContain("has no peering to tear down");
  });
});

describe("pins and artifacts", () => {
  test("fetchPins reads the emulator's pins; an invalid pin set is refused with problems located in the answer", async () => {
    const emulator = await start();
    const api = client(emulator);
    const resolved = await fetchPins(api, { arch: "amd64" });
    expect(resolved.origin).toBe("platform");
    expect(resolved.pins.tools.helm.artifacts?.amd64?.url).toBe(
      `${emulator.url}/artifacts/helm/v3.18.6/helm-v3.18.6-linux-amd64.tar.gz`,
    );

    const broken = structuredClone(emulator.pins) as unknown as { tools: { k3s: { version: string } } };
    broken.tools.k3s.version = "latest";
    emulator.setPins(broken);
    const error = await userErrorOf(fetchPins(api, { arch: "amd64" }));
    expect(error.code).toBe(versionPinsErrorCodes.PINS_INVALID.code);
    expect(error.problems.map(formatProblem)).toEqual([
      `${emulator.url}/api/v1/pins?arch=amd64:1: field tools.k3s.version: "latest" must be a k3s version such as v1.33.5+k3s1`,
    ]);
    const arch = await userErrorOf(api.getPinsDocument({ arch: "s390x" }));
    expect(arch.message).toBe('the platform has no pins for architecture "s390x"');
  });

  test("a pinned companion tool downloads, verifies, and runs; its version answers like the real one", async () => {
    const emulator = await start();
    const dir = await tempDir("noderings-download-");
    cleanups.push(dir.cleanup);
    const pins = await fetchPins(client(emulator), { arch: "amd64" });
    for (const tool of ["helm", "liqoctl"] as const) {
      const artifact = requireArtifact(pins, tool, "amd64");
      const progress: number[] = [];
      const file = join(dir.path, `${tool}.tar.gz`);
      const done = await downloadArtifact({ ...artifact, label: `${tool} ${artifact.version}` }, file, {
        onProgress: (n) => progress.push(n),
      });
      expect(done).toEqual({ path: file, sha256: artifact.sha256, bytes: artifact.size });
      expect(progress.at(-1)).toBe(artifact.size);
      const out = join(dir.path, tool);
      await mkdir(out);
      await extract({ file, cwd: out });
      const version = execFileSync(
        join(out, artifact.member ?? tool),
        tool === "helm" ? ["version", "--template={{.Version}}"] : ["version", "--client"],
        { encoding: "utf8" },
      );
      expect(version.trim()).toBe(tool === "helm" ? "v3.18.6" : "Client version: v1.0.1");
    }
  });

  test("a tampered download is a digest mismatch and a truncated one is truncated; neither leaves a file", async () => {
    const emulator = await start();
    const dir = await tempDir("noderings-download-");
    cleanups.push(dir.cleanup);
    const artifact = requireArtifact(await fetchPins(client(emulator), { arch: "arm64" }), "helm", "arm64");

    emulator.artifactFault("tamper");
    const tampered = await userErrorOf(downloadArtifact(artifact, join(dir.path, "helm.tgz")));
    expect(tampered.code).toBe(nodeRingsErrorCodes.DOWNLOAD_DIGEST_MISMATCH.code);
    expect(tampered.exitCode).toBe(ExitCode.CheckFailed);
    expect(tampered.why).toMatch(new RegExp(`^expected sha256 ${artifact.sha256}, got [0-9a-f]{64}`));

    emulator.artifactFault("truncate");
    const truncated = await userErrorOf(downloadArtifact(artifact, join(dir.path, "helm.tgz")));
    expect(truncated.code).toBe("DOWNLOAD_TRUNCATED");
    expect(truncated.message).toMatch(new RegExp(`ended after \\d+ of ${artifact.size} bytes; nothing was kept$`));

    expect(await readdir(dir.path)).toEqual([]);
  });

  test("pins without a digest for the architecture refuse the download before it starts", async () => {
    const emulator = await start();
    const pins = structuredClone(emulator.pins);
    delete pins.tools.liqoctl.artifacts?.arm64?.sha256;
    emulator.setPins(pins);
    const resolved = await fetchPins(client(emulator), { arch: "arm64" });
    const error = await userErrorOf(Promise.resolve().then(() => requireArtifact(resolved, "liqoctl", "arm64")));
    expect(error.code).toBe("PINS_DIGEST_MISSING");
    expect(error.problems.map(formatProblem)).toEqual([
      `${emulator.url}/api/v1/pins?arch=arm64: field tools.liqoctl.artifacts.arm64.sha256: is missing: the download cannot be verified`,
    ]);
    expect(emulator.requests.some((r) => r.path.startsWith("/artifacts/"))).toBe(false);
  });
});
