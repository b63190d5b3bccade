import type { CoreV1Api } from "@kubernetes/client-node";
import { eventually } from "@nodekit/test-utils";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AUTH_CONFIGMAP_CANDIDATES, Authenticator, type RunningEmulator, startEmulator } from "./index.ts";
import { connectSite } from "./site.ts";
import { authOff, authOn, FAST, mintToken, randomSuffix, stateFile } from "./test-support.ts";

interface Answer {
  status: number;
  body: { error?: { code: number; reason: string; message: string }; items?: unknown[] };
}

async function get(url: string, authorization?: string): Promise<Answer> {
  const response = await fetch(`${url}/api/v1/clusters`, {
    headers: authorization === undefined ? {} : { authorization },
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

// The auth ConfigMaps live in fixed namespaces (nke-controller and its fallbacks): state every
// emulator on the cluster reads. This file turns auth on and off, so it has a control plane of
// its own; on the shared one, the other files' emulators (auth off) got 401s whenever they ran
// at the same time as it.
describe("auth exactly like the controller: the auth ConfigMap, then a TokenReview for its audience", () => {
  let emulator: RunningEmulator;
  let core: CoreV1Api;
  const audience = `nvke-test-${randomSuffix()}`;
  const logs: string[] = [];

  beforeAll(async () => {
    const plane = await useControlPlane({ dedicated: true });
    ({ core } = clientsFor(plane.adminKubeconfigPath));
    await authOff(core);
    emulator = await startEmulator({
      kubeconfigPath: plane.adminKubeconfigPath,
      stateFile: await stateFile(),
      timing: FAST,
      clustersNamespace: await plane.createNamespace("nvke-clusters"),
      authConfigTtlMs: 0,
      log: (line) => logs.push(line),
    });
  });
  afterAll(async () => {
    await emulator?.stop();
    await authOff(core);
  });

  test("with no auth ConfigMap anywhere, auth is off and a bare request is served", async () => {
    await authOff(core);
    expect((await get(emulator.url)).status).toBe(200);
  });

  test("with nvke-auth-config in nke-controller, a bare request is 401 with the error body", async () => {
    await authOn(core, audience);
    const answer = await get(emulator.url);
    expect(answer.status).toBe(401);
    expect(answer.body.error).toEqual({
      code: 401,
      reason: "Unauthorized",
      message: `authentication required: send a bearer token for audience "${audience}"`,
    });
  });

  test("a TokenRequest token for nke-clients/nke-client with the audience is accepted", async () => {
    await authOn(core, audience);
    const token = await mintToken(core, audience);
    const answer = await get(emulator.url, `Bearer ${token}`);
    expect(answer.status).toBe(200);
    expect(answer.body.items).toEqual([]);
    // And the log names the identity, never the token
    expect(logs.join("\n")).toContain("user=system:serviceaccount:nke-clients:nke-client");
    expect(logs.join("\n")).not.toContain(token);
  });

  test("a real token for another audience is 401", async () => {
    await authOn(core, audience);
    const token = await mintToken(core, "someone-else");
    const answer = await get(emulator.url, `Bearer ${token}`);
    expect(answer.status).toBe(401);
    expect(answer.body.error?.message).toMatch(new RegExp(`^bearer token rejected for audience "${audience}"`));
    expect(answer.body.error?.message).not.toContain(token);
  });

  test("a made-up token and a malformed header are 401", async () => {
    await authOn(core, audience);
    expect((await get(emulator.url, "Bearer not-a-real-token")).status).toBe(401);
    const malformed = await get(emulator.url, "Basic dXNlcjpwYXNz");
    expect(malformed.status).toBe(401);
    expect(malformed.body.error?.message).toBe('the Authorization header is not "Bearer <token>"');
  });

  test("the search falls back to nke-auth-config in cloud-workflow-engine, and reads the audience there", async () => {
    await authOff(core);
    const fallback = AUTH_CONFIGMAP_CANDIDATES[3];
    const otherAudience = `legacy-${randomSuffix()}`;
    await authOn(core, otherAudience, fallback);
    expect((await get(emulator.url)).status).toBe(401);
    expect((await get(emulator.url, `Bearer ${await mintToken(core, otherAudience)}`)).status).toBe(200);
    expect((await get(emulator.url, `Bearer ${await mintToken(core, audience)}`)).status).toBe(401);

    // And an earlier candidate wins over a later one
    await authOn(core, audience, AUTH_CONFIGMAP_CANDIDATES[0]);
    expect((await get(emulator.url, `Bearer ${await mintToken(core, audience)}`)).status).toBe(200);
  });

  test("flipping auth off again serves bare requests; /healthz and /api/docs never need a token", async () => {
    await authOn(core, audience);
    expect((await fetch(`${emulator.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${emulator.url}/api/docs`)).status).toBe(200);
    await authOff(core);
    expect((await get(emulator.url)).status).toBe(200);
  });
});

describe("the auth configuration is served from what is known, like a controller's informer cache", () => {
  let core: CoreV1Api;
  let kubeconfigPath: string;
  const audience = `nvke-cache-${randomSuffix()}`;

  beforeAll(async () => {
    const plane = await useControlPlane({ dedicated: true });
    kubeconfigPath = plane.adminKubeconfigPath;
    ({ core } = clientsFor(kubeconfigPath));
  });
  afterAll(async () => {
    await authOff(core);
  });

  test("a stale configuration is answered at once and re-read behind the request", async () => {
    await authOn(core, audience);
    let clock = 1_000_000;
    const auth = new Authenticator(connectSite(kubeconfigPath), { configTtlMs: 1000, now: () => clock });
    expect(await auth.currentConfig()).toMatchObject({ mode: "on", audience });

    await authOff(core);
    // Within the TTL: what is known, without a read.
    clock += 500;
    expect(await auth.currentConfig()).toMatchObject({ mode: "on", audience });
    // Past it: still what is known (the request does not wait for the API server)...
    clock += 1000;
    expect(await auth.currentConfig()).toMatchObject({ mode: "on", audience });
    // ...while the re-read it started brings the change in.
    await eventually(async () => expect(await auth.currentConfig()).toEqual({ mode: "off" }));
  });

  test("a view older than two seconds is never used: after an idle spell the first request waits for a fresh read", async () => {
    await authOn(core, audience);
    let clock = 2_000_000;
    const auth = new Authenticator(connectSite(kubeconfigPath), { now: () => clock });
    expect(await auth.currentConfig()).toMatchObject({ mode: "on", audience });

    // Auth turned off while the controller sat idle for a minute: the first request sees it.
    await authOff(core);
    clock += 60_000;
    expect(await auth.currentConfig()).toEqual({ mode: "off" });

    // And turned on again: two seconds later (without a request in between), it is on.
    await authOn(core, audience);
    clock += 2000;
    expect(await auth.currentConfig()).toMatchObject({ mode: "on", audience });
  });

  test("the emulator judges requests on a view at most two seconds old (default TTL, its own clock)", async () => {
    await authOn(core, audience);
    let clock = Date.now();
    const emulator = await startEmulator({
      kubeconfigPath,
      stateFile: await stateFile(),
      timing: FAST,
      now: () => clock,
    });
    try {
      expect((await get(emulator.url)).status).toBe(401);
      // The auth ConfigMaps are deleted after an idle spell: the very first bare request is served.
      await authOff(core);
      clock += 30_000;
      expect((await get(emulator.url)).status).toBe(200);
      expect((await get(emulator.url)).status).toBe(200);
      // Auth is turned on; two seconds on, a bare request is refused.
      await authOn(core, audience);
      clock += 2000;
      expect((await get(emulator.url)).status).toBe(401);
    } finally {
      await emulator.stop();
    }
  });

  test("a token trusted from an earlier review still names its identity", async () => {
    await authOn(core, audience);
    const auth = new Authenticator(connectSite(kubeconfigPath), { configTtlMs: 0 });
    const token = await mintToken(core, audience);
    const identity = "system:serviceaccount:nke-clients:nke-client";
    expect(await auth.authenticate(`Bearer ${token}`)).toBe(identity);
    expect(await auth.authenticate(`Bearer ${token}`)).toBe(identity);
  });
});
