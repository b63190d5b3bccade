import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { action } from "@nodekit/plan";
import { createRecordingRunner } from "@nodekit/process";
import { deadPid, exists, testdir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { acquireLock, breakStaleLock, createStateStore, inspectLock, lockPathOf, phase, runPhases } from "./index.ts";

/** A lock on a fresh state file, taken by "killed run" and left with its owner record changed by `edit`. */
async function killedRunLock(edit: (owner: { pid: number; startTime?: string }) => void | Promise<void>) {
  const dir = await testdir({});
  const file = dir.path("state.json");
  const held = await acquireLock({ file, name: "killed run", runId: "r1" });
  const owner = JSON.parse(await readFile(`${file}.lock-owner.json`, "utf8")) as { pid: number; startTime?: string };
  await edit(owner);
  await writeFile(`${file}.lock-owner.json`, JSON.stringify(owner));
  return { file, held, owner };
}

/** breakStaleLock removes the stale lock, and the next run takes the lock. */
async function breakAndTakeOver(file: string, held: { release(): Promise<void> }) {
  expect(await breakStaleLock(file)).toMatchObject({ state: "stale" });
  expect(await exists(lockPathOf(file))).toBe(false);
  const next = await acquireLock({ file, name: "next run", runId: "r2" });
  await next.release();
  await held.release().catch(() => {});
}

describe("the run lock", () => {
  it("refuses a second run while the first holds the lock, naming who holds it", async () => {
    const dir = await testdir({});
    const file = dir.path("state.json");
    const held = await acquireLock({ file, name: "first run", runId: "r1" });
    const error = await userErrorOf(acquireLock({ file, name: "second run", runId: "r2" }));
    expect(error.code).toBe("RUN_LOCKED");
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain(`first run (pid ${process.pid} on ${hostname()}`);
    await held.release();
    expect(await exists(lockPathOf(file))).toBe(false);
    const again = await acquireLock({ file, name: "second run", runId: "r2" });
    await again.release();
  });

  it("two runs started together: exactly one runs", async () => {
    const dir = await testdir({});
    const store = createStateStore({ path: dir.path("state.json") });
    let inside = 0;
    let most = 0;
    const slow = phase<object>()({
      id: "slow",
      title: "Slow",
      needs: [],
      inputs: () => ({}),
      plan: () => [action("wait", "wait a little", { mutates: true })],
      actions: {
        wait: async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((resolve) => setTimeout(resolve, 200));
          inside--;
        },
      },
    });
    const run = () => runPhases({ name: "t", phases: [slow], context: {}, store, runner: createRecordingRunner() });
    const results = await Promise.allSettled([run(), run()]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect((refused.reason as { code: string }).code).toBe("RUN_LOCKED");
    expect(most).toBe(1);
  });

  it("a lock left by a killed run is reported as stale with how to clear it, and never taken over", async () => {
    // What a kill -9 leaves: the lock directory, and the owner record naming a process now gone.
    const { file, held, owner } = await killedRunLock(async (owner) => {
      owner.pid = await deadPid();
    });

    const inspection = await inspectLock(file);
    expect(inspection).toMatchObject({ state: "stale", owner: { pid: owner.pid } });
    const error = await userErrorOf(acquireLock({ file, name: "next run", runId: "r2" }));
    expect(error.code).toBe("RUN_LOCK_STALE");
    expect(error.message).toContain(`pid ${owner.pid}`);
    expect(error.why).toContain("no longer running");
    expect(error.next.join(" ")).toContain(lockPathOf(file));
    expect(error.facts).toMatchObject({ lock: lockPathOf(file), ownerPid: owner.pid });
    expect(await exists(lockPathOf(file))).toBe(true);

    await breakAndTakeOver(file, held);
  });

  it("a lock whose pid another process took since (pid + start time) is stale, and is broken", async () => {
    // What a kill -9 and a reboot-free pid reuse leave: the owner's pid is a live process (this
    // one), but not the process that took the lock: it started at another time.
    const { file, held } = await killedRunLock((owner) => {
      expect(owner.startTime).toMatch(/^\d+$/);
      owner.startTime = "1";
    });
    const inspection = await inspectLock(file);
    expect(inspection).toMatchObject({ state: "stale", owner: { pid: process.pid } });
    expect(inspection.state === "stale" && inspection.why).toContain("that pid is another process now");
    expect((await userErrorOf(acquireLock({ file, name: "next run", runId: "r2" }))).code).toBe("RUN_LOCK_STALE");
    await breakAndTakeOver(file, held);
  });

  it("one lock at a path of its own guards every state: two states on one machine never run at once", async () => {
    const dir = await testdir({});
    const path = dir.path("machine/register.lock");
    const first = await acquireLock({ file: dir.path("home-a/state.json"), path, name: "run a", runId: "a" });
    const error = await userErrorOf(
      acquireLock({ file: dir.path("home-b/state.json"), path, name: "run b", runId: "b" }),
    );
    expect(error.code).toBe("RUN_LOCKED");
    expect(error.message).toContain("run a (pid");
    expect(error.facts).toMatchObject({ lock: path });
    expect(await exists(`${dir.path("home-a/state.json")}.lock`)).toBe(false);
    await first.release();
    const second = await acquireLock({ file: dir.path("home-b/state.json"), path, name: "run b", runId: "b" });
    await second.release();
    expect(await breakStaleLock(dir.path("home-b/state.json"), { path })).toBeUndefined();
  });

  it("a held lock is never broken", async () => {
    const dir = await testdir({});
    const file = dir.path("state.json");
    const held = await acquireLock({ file, name: "live run", runId: "r1" });
    expect((await userErrorOf(breakStaleLock(file))).code).toBe("RUN_LOCKED");
    expect(await exists(lockPathOf(file))).toBe(true);
    await held.release();
    expect(await breakStaleLock(file)).toBeUndefined();
  });

  it("a lock without an owner record is stale once nobody refreshed it for the stale time", async () => {
    const dir = await testdir({ "state.json.lock/": "" });
    const file = dir.path("state.json");
    expect((await inspectLock(file)).state).toBe("held");
    const later = new Date(Date.now() + 60_000);
    expect(await inspectLock(file, { clock: () => later })).toMatchObject({ state: "stale" });
  });
});
