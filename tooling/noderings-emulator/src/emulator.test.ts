// The emulator itself: its state file across restarts, the state file's validation, and the
// `pnpm emulator:noderings` process (URL on stdout, refusal of a bad state file, one process).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, watch } from "node:fs";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatProblem } from "@nodekit/errors";
import { createNodeRingsClient } from "@nodekit/noderings-api";
import { eventually, repoRoot, tempDir } from "@nodekit/test-utils";
import { afterEach, describe, expect, test } from "vitest";
import { DEV_TOKEN, StateFileError, startNodeRingsEmulator } from "./index.ts";
import { outboundRequest } from "./test-support.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scratch(): Promise<string> {
  const dir = await tempDir("noderings-emulator-test-");
  cleanups.push(dir.cleanup);
  return dir.path;
}

describe("the state file", () => {
  test("keeps agents, peering and idempotency records across a restart, written 0600", async () => {
    // Given an emulator with a state file, an agent and a peering in progress
    const stateFile = join(await scratch(), "state.json");
    let clock = 5_000_000;
    const first = await startNodeRingsEmulator({ stateFile, clock: () => clock, timing: { inboundMs: 1_000 } });
    const api = createNodeRingsClient({ baseUrl: first.url, token: DEV_TOKEN });
    const agent = await api.createAgent({ name: "kept" }, { idempotencyKey: "key-1" });
    await api.startOutboundPeering(agent.id, outboundRequest("kept"));
    await api.requestInboundPeering(agent.id, { clusterId: "kept", outbound: "Established" });
    await api.completeInboundPeering(agent.id, { clusterId: "kept", reversePeering: "Done" });
    await first.stop();
    expect((await stat(stateFile)).mode & 0o777).toBe(0o600);
    expect(await readFile(stateFile, "utf8")).not.toContain(DEV_TOKEN);

    // When it starts again on the same file, after the inbound peering fell due
    clock += 5_000;
    const second = await startNodeRingsEmulator({ stateFile, clock: () => clock });
    cleanups.push(() => second.stop());
    const again = createNodeRingsClient({ baseUrl: second.url, token: DEV_TOKEN });

    // Then the agent is there, the peering settled on start, and the same create is replayed, not repeated
    expect((await again.getAgent(agent.id)).name).toBe("kept");
    expect((await again.getPeeringStatus(agent.id)).inbound.state).toBe("Established");
    expect((await again.createAgent({ name: "kept" }, { idempotencyKey: "key-1" })).id).toBe(agent.id);
    expect(second.requests.at(-1)?.replayed).toBe(true);
  });

  test("a state file that is not JSON, or not the emulator's, is refused with every problem located", async () => {
    const dir = await scratch();
    const notJson = join(dir, "a.json");
    await writeFile(notJson, '{"kind": "NodeRingsEmulatorState",\n  "version": 1,\n  "agents": {,\n}');
    const syntax = await startNodeRingsEmulator({ stateFile: notJson }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(syntax).toBeInstanceOf(StateFileError);
    expect((syntax as StateFileError).problems.map(formatProblem)).toEqual([
      expect.stringMatching(new RegExp(`^${notJson}:3: column 14: is not valid YAML`)),
    ]);

    const wrong = join(dir, "b.json");
    const agent = {
      account: "default",
      agent: { id: "nope", name: "x", state: "Sleeping", createdAt: "t", updatedAt: "t" },
      peering: { outbound: { state: "None" }, inbound: { state: "None" } },
      offloading: { offloaded: [] },
      healthReports: [],
    };
    await writeFile(
      wrong,
      JSON.stringify({ kind: "NodeRingsEmulatorState", version: 1, agents: { a1: agent }, idempotency: {} }, null, 2),
    );
    const error = (await startNodeRingsEmulator({ stateFile: wrong }).catch((e: unknown) => e)) as StateFileError;
    expect(error.problems.map(formatProblem)).toEqual([
      `${wrong}:8: field agents.a1.agent.id: "nope" must be a UUID`,
      `${wrong}:10: field agents.a1.agent.state: "Sleeping" must be "Registered" or "Peering" or "Peered" or "Ready" or "Degraded"`,
      `${wrong}:11: field agents.a1.agent.createdAt: "t" is not a valid date and time (ISO 8601, e.g. 2025-01-31T12:00:00Z)`,
      `${wrong}:12: field agents.a1.agent.updatedAt: "t" is not a valid date and time (ISO 8601, e.g. 2025-01-31T12:00:00Z)`,
    ]);
  });

  test("without a state file, each run starts fresh and leaves nothing behind", async () => {
    const emulator = await startNodeRingsEmulator();
    await createNodeRingsClient({ baseUrl: emulator.url, token: DEV_TOKEN }).createAgent({ name: "gone" });
    expect(existsSync(emulator.stateFile)).toBe(true);
    await emulator.stop();
    expect(existsSync(emulator.stateFile)).toBe(false);
    const next = await startNodeRingsEmulator();
    cleanups.push(() => next.stop());
    expect(next.stateFile).not.toBe(emulator.stateFile);
    expect(Object.keys(next.state.agents)).toEqual([]);
  });
});

describe("the control routes (/_emulator/*)", () => {
  const ADMIN = "admin-token-of-this-test";
  const post = (url: string, path: string, body: unknown, authorization?: string) =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization === undefined ? {} : { authorization }) },
      body: JSON.stringify(body),
    });

  test("refuse a request without the emulator's admin token (401), an API token included, and do nothing", async () => {
    // Given an emulator with an API token and an admin token of its own
    const emulator = await startNodeRingsEmulator({ tokens: ["api-token"], adminToken: ADMIN });
    cleanups.push(() => emulator.stop());

    // When another local user's process asks it to serve pins of its choosing, with no token, a wrong one or an API token
    for (const authorization of [undefined, "Bearer wrong", "Bearer api-token", `Basic ${ADMIN}`]) {
      const response = await post(emulator.url, "/_emulator/pins", { pins: { planted: true } }, authorization);

      // Then each is refused with the service's 401 body, and the pins are still the real ones
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unauthenticated");
    }
    const pins = await fetch(`${emulator.url}/api/v1/pins?arch=amd64`, {
      headers: { authorization: "Bearer api-token" },
    });
    expect(await pins.json()).toEqual(emulator.pins);
    expect((await post(emulator.url, "/_emulator/reconcile", {})).status).toBe(401);

    // And with the admin token the route works
    const allowed = await post(emulator.url, "/_emulator/pins", { pins: { planted: true } }, `Bearer ${ADMIN}`);
    expect(allowed.status).toBe(200);
  });

  test("without an admin token given, each emulator makes a random one of its own", async () => {
    const first = await startNodeRingsEmulator();
    cleanups.push(() => first.stop());
    const second = await startNodeRingsEmulator();
    cleanups.push(() => second.stop());
    expect(first.adminToken).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(second.adminToken).not.toBe(first.adminToken);
    expect((await post(first.url, "/_emulator/reconcile", {}, `Bearer ${first.adminToken}`)).status).toBe(200);
    expect((await post(first.url, "/_emulator/reconcile", {}, `Bearer ${second.adminToken}`)).status).toBe(401);
  });
});

describe("the request log", () => {
  const get = async (url: string) => (await fetch(url)).body?.cancel();

  test("keeps the last requests only, however many it answers (1,000 by default)", async () => {
    const emulator = await startNodeRingsEmulator();
    cleanups.push(() => emulator.stop());
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 100 }, (_, n) => get(`${emulator.url}/api/v1/agents/${batch * 100 + n}`)));
    }
    await get(`${emulator.url}/api/v1/agents/next`);
    await get(`${emulator.url}/api/v1/agents/last`);

    expect([...emulator.requests]).toHaveLength(1_000);
    expect(emulator.requests.at(-1)).toMatchObject({ method: "GET", path: "/api/v1/agents/last", status: 401 });
    // `length` still counts every request, so that a test can tell whether one was made
    expect(emulator.requests.length).toBe(1_002);
  });

  test("keeps as many as asked; what a test counts from a position is right past the limit, or refused", async () => {
    const emulator = await startNodeRingsEmulator({ requestLogLimit: 5 });
    cleanups.push(() => emulator.stop());
    for (let n = 0; n < 12; n++) await get(`${emulator.url}/api/v1/agents/${n}`);
    expect(emulator.requests.map((r) => r.path)).toEqual([7, 8, 9, 10, 11].map((n) => `/api/v1/agents/${n}`));

    const before = emulator.requests.length;
    await get(`${emulator.url}/api/v1/agents/after`);
    expect(emulator.requests.length).toBe(before + 1);
    expect(emulator.requests.slice(before).map((r) => r.path)).toEqual(["/api/v1/agents/after"]);
    expect(() => emulator.requests.slice(before - 5)).toThrow(/no longer kept/);
  });
});

describe("pnpm emulator:noderings", () => {
  const main = join(repoRoot, "tooling/noderings-emulator/src/main.ts");

  function run(
    args: string[],
    wrapper?: string,
  ): { child: ChildProcess; stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
    const command =
      wrapper === undefined ? [process.execPath, "--conditions=source", main, ...args] : ["sh", "-c", wrapper];
    const child = spawn(command[0] ?? "", command.slice(1), {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "", NODE: process.execPath, MAIN: main },
    });
    let out = "";
    let err = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    return { child, stdout: () => out, stderr: () => err, exit };
  }

  test("prints its URL as a line on stdout once ready, serves it, and stops on SIGTERM writing its state", async () => {
    const stateFile = join(await scratch(), "state.json");
    const emulator = run(["--state", stateFile]);
    const url = await eventually(async () => {
      const line = emulator.stdout().split("\n")[0] ?? "";
      if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(line) || !emulator.stdout().endsWith("\n"))
        throw new Error(`no URL yet: ${emulator.stderr()}`);
      return line;
    });
    const api = createNodeRingsClient({ baseUrl: url, token: DEV_TOKEN });
    await api.createAgent({ name: "from-cli" });
    emulator.child.kill("SIGTERM");
    expect(await emulator.exit).toBe(0);
    expect(emulator.stdout()).toBe(`${url}\n`);
    expect(emulator.stderr()).not.toContain(DEV_TOKEN);
    expect(await readFile(stateFile, "utf8")).toContain('"from-cli"');
  });

  const urlOf = (emulator: ReturnType<typeof run>) =>
    eventually(async () => {
      const line = emulator.stdout().split("\n")[0] ?? "";
      if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(line) || !emulator.stdout().endsWith("\n"))
        throw new Error(`no URL yet: ${emulator.stderr()}`);
      return line;
    });

  test("a kill -9 in the middle of a state write leaves no temporary file after the next start, and a state it reads", async () => {
    const dir = await scratch();
    const stateFile = join(dir, "state.json");
    // A larger state (about a megabyte of recent idempotency records) makes each write longer, and
    // the kill is sent the moment a write's temporary file appears, so it lands in the middle of
    // one: two rounds in each of five runs, quiet and beside six busy loops. A kill after a fixed
    // delay needed three to six rounds, and took 24 s in one loaded run of the unit projects.
    const idempotency = Object.fromEntries(
      Array.from({ length: 3_000 }, (_, n) => [
        `seed\u0000key-${n}`,
        {
          account: "seed",
          fingerprint: `POST /api/v1/agents ${"0".repeat(64)}`,
          status: 201,
          body: { name: `seed-${n}`, padding: "x".repeat(120) },
          createdMs: Date.now(),
        },
      ]),
    );
    await writeFile(stateFile, JSON.stringify({ kind: "NodeRingsEmulatorState", version: 1, agents: {}, idempotency }));
    let killedMidWrite = 0;
    const acknowledged = new Set<string>();
    for (let round = 0; round < 30 && killedMidWrite < 2; round++) {
      // Given an emulator busy writing its state: each create is answered once the state file holds it
      const emulator = run(["--state", stateFile]);
      const api = createNodeRingsClient({ baseUrl: await urlOf(emulator), token: DEV_TOKEN, retry: { limit: 0 } });
      let killed = false;
      const writers = Array.from({ length: 6 }, async (_, writer) => {
        for (let n = 0; !killed; n++) {
          const name = `r${round}-w${writer}-${n}`;
          await api.createAgent({ name }).then(
            () => acknowledged.add(name),
            () => undefined,
          );
        }
      });
      // When it is killed outright, once it has acknowledged creates this round, as its next state
      // write begins (or two seconds after, without one)
      const before = acknowledged.size;
      await eventually(
        async () => {
          if (acknowledged.size < before + 3) throw new Error(`${acknowledged.size - before} creates acknowledged`);
        },
        15_000,
        10,
      );
      const watcher = watch(dir);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        watcher.on("change", (_event, name) => {
          if (name !== "state.json") {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      emulator.child.kill("SIGKILL");
      watcher.close();
      await emulator.exit;
      killed = true;
      await Promise.all(writers);
      if ((await readdir(dir)).some((name) => name !== "state.json")) killedMidWrite++;

      // Then the next start removes what the killed write left, and reads the state: every acknowledged agent is there
      const next = run(["--state", stateFile]);
      const url = await urlOf(next);
      expect(await readdir(dir)).toEqual(["state.json"]);
      const listed = await fetch(`${url}/api/v1/agents`, { headers: { authorization: `Bearer ${DEV_TOKEN}` } });
      const names = new Set(((await listed.json()) as { items: Array<{ name: string }> }).items.map((a) => a.name));
      expect([...acknowledged].filter((name) => !names.has(name))).toEqual([]);
      next.child.kill("SIGTERM");
      expect(await next.exit).toBe(0);
    }
    // (the kill came in the middle of a write at least twice: a temporary file was there)
    expect(killedMidWrite).toBeGreaterThanOrEqual(2);
    expect(acknowledged.size).toBeGreaterThan(0);
  }, 240_000);

  test("its control routes take the admin token in --admin-token-file, and are closed without one", async () => {
    const dir = await scratch();
    await writeFile(join(dir, "admin-token"), "admin-from-file\n", { mode: 0o600 });
    const control = (url: string, authorization?: string) =>
      fetch(`${url}/_emulator/reconcile`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization === undefined ? {} : { authorization }) },
        body: "{}",
      }).then((response) => response.status);

    const opened = run(["--admin-token-file", join(dir, "admin-token")]);
    const url = await urlOf(opened);
    expect(await control(url)).toBe(401);
    expect(await control(url, `Bearer ${DEV_TOKEN}`)).toBe(401);
    expect(await control(url, "Bearer admin-from-file")).toBe(200);
    expect(opened.stderr()).not.toContain("admin-from-file");

    const closed = run([]);
    expect(await control(await urlOf(closed), "Bearer admin-from-file")).toBe(401);
    expect(closed.stderr()).toContain("the control routes (/_emulator/*) are closed");
    for (const emulator of [opened, closed]) {
      emulator.child.kill("SIGTERM");
      expect(await emulator.exit).toBe(0);
    }
  });

  test("refuses a bad state file before printing a URL, with the located problem and exit 3", async () => {
    const stateFile = join(await scratch(), "state.json");
    await writeFile(stateFile, JSON.stringify({ kind: "Something", version: 1, agents: {}, idempotency: {} }));
    const emulator = run(["--state", stateFile]);
    expect(await emulator.exit).toBe(3);
    expect(emulator.stdout()).toBe("");
    expect(emulator.stderr()).toContain(
      `${stateFile}:1: field kind: "Something" must be "NodeRingsEmulatorState": this is not a NodeRings emulator state file`,
    );
  });

  test("bad flags are a usage error (exit 2)", async () => {
    const emulator = run(["--port", "x"]);
    expect(await emulator.exit).toBe(2);
    expect(emulator.stderr()).toContain('--port must be a whole number; got "x"');
  });

  test("is one process, and goes when the wrapper that started it is killed with SIGKILL", async () => {
    // Given the emulator started as pnpm starts it: a wrapper, then a shell, then node
    const wrapper = run([], `sh -c '"$NODE" --conditions=source "$MAIN"; :' & wait`);
    const pid = await eventually(async () => {
      const match = /pid (\d+);/.exec(wrapper.stderr());
      if (match === null) throw new Error(`not started yet: ${wrapper.stderr()}`);
      return Number(match[1]);
    });

    // When the wrapper is killed (its shell child lives on, as a shell under pnpm would)
    wrapper.child.kill("SIGKILL");

    // Then the emulator notices and exits
    await eventually(async () => {
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      throw new Error(`emulator ${pid} still running`);
    }, 10_000);
  });
});
