import { chmod, chown, mkdir, readFile, symlink } from "node:fs/promises";
import { action } from "@nodekit/plan";
import { createRecordingRunner } from "@nodekit/process";
import { exists, otherUser, testdir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { acquireLock, createStateStore, lockPathOf, phase, runPhases } from "./index.ts";
import { emptyState } from "./state.ts";

// The state and the lock against what someone else put in their place: a link, a file
// another user owns, a directory others may write to. A state decides which phases count
// as done, and the next checkpoint is written where its name leads.

const other = otherUser();
const done = phase<object>()({
  id: "only",
  title: "Only",
  needs: [],
  inputs: () => ({}),
  plan: () => [action("work", "do the work", { mutates: true })],
  actions: { work: async () => {} },
});

const aState = () => `${JSON.stringify(emptyState("t", "r0", new Date("2025-10-01T12:00:00Z")))}\n`;

describe("the state file", () => {
  it("a link in its place is neither read nor written through; what it points to is left as it is", async () => {
    const dir = await testdir({ "victim.json": aState(), "state/": "" });
    await symlink(dir.path("victim.json"), dir.path("state/run.json"));
    const store = createStateStore({ path: dir.path("state/run.json") });

    const read = await userErrorOf(store.read());
    expect(read.code).toBe("RUN_STATE_UNSAFE");
    expect(read.exitCode).toBe(9);
    expect(read.message).toBe(`the state file ${dir.path("state/run.json")} is not safe to use; it was not read`);
    expect(read.why).toContain("is a symbolic link");

    const write = await userErrorOf(store.write(emptyState("t", "r1", new Date())));
    expect(write.code).toBe("FILE_IS_SYMLINK");
    expect(await dir.read("victim.json")).toBe(aState());
  });

  it("one that others may read or write is not read, and says how to fix it", async () => {
    const dir = await testdir({ "state/run.json": { content: aState(), mode: 0o644 } });
    const error = await userErrorOf(createStateStore({ path: dir.path("state/run.json") }).read());
    expect(error.code).toBe("RUN_STATE_UNSAFE");
    expect(error.next).toEqual([`chmod 600 ${dir.path("state/run.json")}`]);
  });

  it("a state directory every user may write to is refused before anything is read", async () => {
    const dir = await testdir({ "state/run.json": { content: aState(), mode: 0o600 } });
    await chmod(dir.path("state"), 0o777);
    const error = await userErrorOf(createStateStore({ path: dir.path("state/run.json") }).read());
    expect(error.code).toBe("DIR_UNSAFE");
    expect(error.why).toContain("every user may write to it (mode 0777)");
  });

  it("the runner calls beforeRun holding the lock, before it reads the state", async () => {
    const dir = await testdir({});
    const store = createStateStore({ path: dir.path("state.json") });
    const seen: boolean[] = [];
    await runPhases({
      name: "t",
      phases: [done],
      context: {},
      store,
      runner: createRecordingRunner(),
      beforeRun: async () => {
        seen.push(await exists(lockPathOf(store.path)), await exists(store.path));
      },
    });
    expect(seen).toEqual([true, false]);
  });
});

describe("the lock", () => {
  it("its owner record is never written through a link", async () => {
    const dir = await testdir({ "victim.txt": "precious\n" });
    const file = dir.path("state.json");
    await symlink(dir.path("victim.txt"), `${file}.lock-owner.json`);
    const error = await userErrorOf(acquireLock({ file, name: "t", runId: "r1" }));
    expect(error.code).toBe("FILE_IS_SYMLINK");
    expect(await dir.read("victim.txt")).toBe("precious\n");
    // And the lock it took is let go again.
    expect(await exists(lockPathOf(file))).toBe(false);
  });

  it("a link in the lock's place is no run's lock: reported as stale, never followed", async () => {
    const dir = await testdir({ "elsewhere/": "" });
    const file = dir.path("state.json");
    await symlink(dir.path("elsewhere"), lockPathOf(file));
    const error = await userErrorOf(acquireLock({ file, name: "t", runId: "r1" }));
    expect(error.code).toBe("RUN_LOCK_STALE");
    expect(error.why).toContain(`${lockPathOf(file)} is a symbolic link, not a lock a run made`);
  });
});

describe.skipIf(other.skip !== undefined)(`against a second local user (${other.skip ?? "nodekit-other"})`, () => {
  const user = other.user ?? { uid: -1, gid: -1 };

  it("a state another user planted does not decide which phases are done", async () => {
    const dir = await testdir({ "state/run.json": { content: aState(), mode: 0o600 } });
    await chown(dir.path("state/run.json"), user.uid, user.gid);
    const error = await userErrorOf(
      runPhases({
        name: "t",
        phases: [done],
        context: {},
        store: createStateStore({ path: dir.path("state/run.json") }),
        runner: createRecordingRunner(),
        resume: true,
      }),
    );
    expect(error.code).toBe("RUN_STATE_UNSAFE");
    expect(error.why).toContain(`belongs to nodekit-other (uid ${user.uid})`);
    expect(await readFile(dir.path("state/run.json"), "utf8")).toBe(aState());
  });

  it("a state directory another user owns is refused, and no lock or checkpoint is made in it", async () => {
    const dir = await testdir({});
    await mkdir(dir.path("theirs"), { mode: 0o755 });
    await chown(dir.path("theirs"), user.uid, user.gid);
    const file = dir.path("theirs/state.json");
    const error = await userErrorOf(
      runPhases({
        name: "t",
        phases: [done],
        context: {},
        store: createStateStore({ path: file }),
        runner: createRecordingRunner(),
      }),
    );
    expect(error.code).toBe("DIR_UNSAFE");
    expect(await exists(lockPathOf(file))).toBe(false);
    expect(await exists(file)).toBe(false);
  });
});
