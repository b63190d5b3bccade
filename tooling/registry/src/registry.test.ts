import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { portPicker, processAlive, squattedPort } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { type RegistryKind, startRegistry } from "./registry.ts";

describe.each(["distribution", "ggcr"] as RegistryKind[])("%s", (kind) => {
  test("basic auth: 401 with a Basic challenge, 200 with the password; stop() leaves nothing behind", async () => {
    const registry = await startRegistry({ kind, auth: { type: "basic", users: { alice: "pw" } } });
    const pid = Number(readFileSync(join(dirname(registry.storageDir), "pids"), "utf8").split(" ")[0]);
    try {
      expect(registry.host).toMatch(/^127\.0\.0\.1:\d+$/);
      const anonymous = await fetch(`${registry.url}/v2/`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
      const authed = await fetch(`${registry.url}/v2/`, { headers: { authorization: `Basic ${btoa("alice:pw")}` } });
      expect(authed.status).toBe(200);
      expect(processAlive(pid)).toBe(true);
    } finally {
      await registry.stop();
    }
    expect(processAlive(pid)).toBe(false);
    expect(existsSync(registry.storageDir)).toBe(false);
  });

  test("token auth: the challenge names our token server, whose tokens the registry accepts; refuse() makes it answer 401", async () => {
    const registry = await startRegistry({ kind, auth: { type: "token", users: { alice: "pw" } } });
    try {
      const challenge = (await fetch(`${registry.url}/v2/x/manifests/latest`)).headers.get("www-authenticate") ?? "";
      expect(challenge).toContain(`realm="${registry.tokenServer?.realm}"`);
      expect(challenge).toContain('scope="repository:x:pull"');
      const basic = { authorization: `Basic ${btoa("alice:pw")}` };
      const answer = await fetch(
        `${registry.tokenServer?.realm}?service=${registry.tokenServer?.service}&scope=repository:x:pull`,
        { headers: basic },
      );
      const { token } = (await answer.json()) as { token: string };
      const withToken = await fetch(`${registry.url}/v2/x/manifests/latest`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(withToken.status).toBe(404); // authenticated; there is simply no such manifest
      registry.tokenServer?.refuse(true);
      expect((await fetch(`${registry.tokenServer?.realm}?scope=repository:x:pull`, { headers: basic })).status).toBe(
        401,
      );
    } finally {
      await registry.stop();
    }
  });
});

test("distribution with debug: its pprof listener answers on another loopback port", async () => {
  const registry = await startRegistry({ kind: "distribution", debug: true });
  try {
    expect(registry.debugUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(registry.debugUrl).not.toBe(registry.url);
    const index = await fetch(`${registry.debugUrl}/debug/pprof/`);
    expect([index.status, await index.text()]).toEqual([200, expect.stringContaining("profile")]);
  } finally {
    await registry.stop();
  }
});

// A port picked free can be taken by another process before the registry binds it: the
// registry then exits ("address already in use"), whichever of its listeners it was. Start-up
// must notice and start it again on new ports.
describe("a port taken between its pick and the registry's bind", () => {
  test.each([
    { kind: "distribution", which: "its own port (the first pick)", takenPick: 0, options: {} },
    { kind: "ggcr", which: "its own port (the first pick)", takenPick: 0, options: {} },
    { kind: "distribution", which: "its debug listener's (the second)", takenPick: 1, options: { debug: true } },
    { kind: "ggcr", which: "its redirect listener's (the second)", takenPick: 1, options: { blobRedirect: true } },
  ] as const)("$kind, $which: it starts again on new ports", async ({ kind, takenPick, options }) => {
    const squatter = await squattedPort();
    const picker = portPicker(squatter.port, takenPick);
    try {
      const registry = await startRegistry({
        kind,
        ...options,
        pickPort: picker.pick,
      });
      try {
        expect(picker.picks).toBeGreaterThanOrEqual(takenPick === 0 ? 2 : 4); // a second try, as many picks as the first
        expect(registry.log()).toMatch(/address already in use/);
        expect(registry.host).not.toBe(`127.0.0.1:${squatter.port}`);
        expect(registry.debugUrl ?? "").not.toContain(`:${squatter.port}`);
        expect((await fetch(`${registry.url}/v2/`)).status).toBe(200);
      } finally {
        await registry.stop();
      }
    } finally {
      await squatter.close();
    }
  });
});
