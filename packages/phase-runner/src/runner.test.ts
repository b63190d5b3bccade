import { readFile, stat, writeFile } from "node:fs/promises";
import { action, exec, formatPlan, planCallLines } from "@nodekit/plan";
import { CommandFailedError, createExecaRunner, createRecordingRunner, type ProcessRunner } from "@nodekit/process";
import { testdir, userErrorOf } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  createStateStore,
  describePhases,
  type Phase,
  type PhaseEvent,
  phase,
  planPhases,
  type RunPhasesOptions,
  runPhases,
  runStatus,
} from "./index.ts";

interface Ctx {
  version: string;
  name: string;
  /** What happened, in order: the world the phases change. */
  log: string[];
  broken: Set<string>;
  fail: Set<string>;
}

const define = phase<Ctx>();

function phases(): Phase<Ctx>[] {
  return [
    define({
      id: "agent",
      title: "Agent record",
      needs: ["name", "log", "fail"],
      inputs: (ctx) => ({ name: ctx.name }),
      plan: (ctx) => [action("create-agent", `create agent ${ctx.name}`, { mutates: true })],
      actions: {
        "create-agent": async (ctx, _step, io) => {
          ctx.log.push("agent");
          if (ctx.fail.has("agent")) throw new Error("agent failed");
          io.set("agentId", `id-${ctx.name}`);
        },
      },
      preview: (ctx) => ({ agentId: `<id of ${ctx.name}>` }),
    }),
    define({
      id: "install",
      title: "Install the thing",
      needs: ["version", "log", "broken", "fail"],
      inputs: (ctx, prior) => ({ version: ctx.version, agent: prior.require("agent", "agentId") }),
      plan: (ctx, { prior }) => [
        exec(
          { command: "echo", args: ["install", ctx.version, String(prior.require("agent", "agentId"))] },
          { mutates: true },
        ),
        action("record", "record the install", { mutates: false }),
      ],
      actions: {
        record: async (ctx) => {
          ctx.log.push("install");
          if (ctx.fail.has("install")) throw new Error("the install broke");
        },
      },
      probe: async (ctx) => (ctx.broken.has("install") ? { ok: false, reason: "the thing is gone" } : { ok: true }),
    }),
    define({
      id: "verify",
      title: "Verify",
      needs: ["log"],
      inputs: () => ({}),
      plan: () => [action("check", "check everything", { mutates: false })],
      actions: {
        check: async (ctx, _step, io) => {
          ctx.log.push("verify");
          io.set("passed", true);
        },
      },
    }),
  ];
}

function world(overrides: Partial<Ctx> = {}): Ctx {
  return { version: "v1", name: "vm-1", log: [], broken: new Set(), fail: new Set(), ...overrides };
}

/** runPhases named "t" of phases() with a recording runner, unless `options` says otherwise. */
function run(options: Pick<RunPhasesOptions<Ctx>, "context" | "store"> & Partial<RunPhasesOptions<Ctx>>) {
  return runPhases({ name: "t", phases: phases(), runner: createRecordingRunner(), ...options });
}

async function setup() {
  const dir = await testdir({});
  const store = createStateStore({ path: dir.path("state/run.json") });
  return { dir, store };
}

describe("runPhases", () => {
  it("runs the phases in order, checkpointing each with its inputs' hash and outputs", async () => {
    const { store } = await setup();
    const context = world();
    const runner = createRecordingRunner();
    const events: PhaseEvent[] = [];
    const result = await runPhases({
      name: "test run",
      phases: phases(),
      context,
      store,
      runner,
      onEvent: (e) => events.push(e),
    });
    expect(context.log).toEqual(["agent", "install", "verify"]);
    expect(result.ran).toEqual(["agent", "install", "verify"]);
    expect(runner.calls.map((c) => c.line)).toEqual(["echo install v1 id-vm-1"]);
    const state = await store.read();
    expect(state?.status).toBe("succeeded");
    expect(state?.phases.agent).toMatchObject({ state: "done", outputs: { agentId: "id-vm-1" }, runs: 1 });
    expect(state?.phases.install?.inputsHash).toMatch(/^sha256:[a-f0-9]{64}$/);
    // The checkpoint is written before the phase is reported finished.
    const types = events.filter((e) => "phase" in e && e.phase.id === "agent").map((e) => e.type);
    expect(types).toEqual(["phase-started", "step-started", "step-finished", "checkpoint-written", "phase-finished"]);
    const mode = (await stat(store.path)).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it("records a failure and, on resume, keeps completed phases and continues from the failed one", async () => {
    const { store } = await setup();
    const context = world({ fail: new Set(["install"]) });
    const error = await userErrorOf(run({ context, store })).catch((e: unknown) => e as Error);
    expect((error as Error).message).toContain("the install broke");
    let state = await store.read();
    expect(state?.status).toBe("failed");
    expect(state?.phases.install?.state).toBe("failed");
    expect(state?.lastError?.phase).toBe("install");

    context.fail.clear();
    context.log.length = 0;
    const events: PhaseEvent[] = [];
    const result = await run({ context, store, resume: true, onEvent: (e) => events.push(e) });
    expect(context.log).toEqual(["install", "verify"]);
    expect(result.kept).toEqual(["agent"]);
    expect(events.find((e) => e.type === "phase-started")).toMatchObject({ reason: "failed-before" });
    state = await store.read();
    expect(state?.status).toBe("succeeded");
    expect(state?.lastError).toBeUndefined();
    expect(state?.phases.agent?.runs).toBe(1);
    expect(state?.phases.install?.runs).toBe(2);
  });

  it("a user error from a phase keeps its code and gains the phase in its message and facts", async () => {
    const { store } = await setup();
    const failing = define({
      id: "install",
      title: "Install",
      needs: [],
      inputs: () => ({}),
      plan: () => [exec({ command: "sh", args: ["-c", "echo no room >&2; exit 3"] }, { mutates: true })],
    });
    const error = await userErrorOf(run({ phases: [failing], context: world(), store, runner: createExecaRunner() }));
    expect(error.code).toBe("PLAN_STEP_FAILED");
    expect(error.message).toMatch(/^install/);
    expect(error.facts).toMatchObject({ phase: "install", stateFile: store.path });
    expect(error.why).toContain("no room");
  });

  it("on resume, a phase whose inputs changed runs again, and every phase after it", async () => {
    const { store } = await setup();
    const context = world();
    await run({ context, store });
    context.log.length = 0;
    context.version = "v2";
    const events: PhaseEvent[] = [];
    await run({ context, store, resume: true, onEvent: (e) => events.push(e) });
    expect(context.log).toEqual(["install", "verify"]);
    const started = events.filter((e) => e.type === "phase-started").map((e) => [e.phase.id, e.reason]);
    expect(started).toEqual([
      ["install", "inputs-changed"],
      ["verify", "after-earlier-rerun"],
    ]);
  });

  it("on resume, a phase whose probe fails runs again; the phases after it are probed, not re-run (no cascade)", async () => {
    const { store } = await setup();
    const context = world();
    await run({ context, store });
    context.log.length = 0;
    context.broken.add("install");
    const events: PhaseEvent[] = [];
    await run({ context, store, resume: true, onEvent: (e) => events.push(e) });
    expect(context.log).toEqual(["install"]);
    expect(events.find((e) => e.type === "phase-started")).toMatchObject({
      phase: { id: "install" },
      reason: "probe-failed",
      detail: "the thing is gone",
    });
    expect(events.filter((e) => e.type === "phase-kept").map((e) => [e.phase.id, e.basis])).toEqual([
      ["agent", "unchanged"],
      ["verify", "unchanged"],
    ]);
    // and the state does not mark them stale: a run killed now would not redo them either
    const state = await store.read();
    expect(state?.phases.verify?.state).toBe("done");
  });

  it("on resume with nothing changed, redoes nothing", async () => {
    const { store } = await setup();
    const context = world();
    await run({ context, store });
    context.log.length = 0;
    const runner = createRecordingRunner();
    const result = await run({ context, store, runner, resume: true });
    expect(context.log).toEqual([]);
    expect(runner.calls).toEqual([]);
    expect(result.kept).toEqual(["agent", "install", "verify"]);
  });

  it("refuses to start over an earlier run's state without resume or restart, changing nothing", async () => {
    const { store } = await setup();
    const context = world();
    await run({ context, store });
    const before = await readFile(store.path, "utf8");
    context.log.length = 0;
    const error = await userErrorOf(
      run({ context, store, resumeLabels: { resume: "--resume", restart: "--restart" } }),
    );
    expect(error.code).toBe("RUN_STATE_EXISTS");
    expect(error.next.join("\n")).toContain("--resume");
    expect(context.log).toEqual([]);
    expect(await readFile(store.path, "utf8")).toBe(before);

    await run({ context, store, restart: true });
    expect(context.log).toEqual(["agent", "install", "verify"]);
  });

  it("a guard skips a phase and the state records why", async () => {
    const { store } = await setup();
    const list = phases();
    const verify = list[2] as Phase<Ctx>;
    list[2] = { ...verify, guard: () => "--skip-verify" };
    const context = world();
    const result = await run({ phases: list, context, store });
    expect(result.skipped).toEqual(["verify"]);
    expect((await store.read())?.phases.verify).toEqual({ state: "skipped", reason: "--skip-verify", runs: 0 });
  });

  it("a phase needing the output of a skipped one says which and why", async () => {
    const { store } = await setup();
    const error = await userErrorOf(run({ context: world(), store, selection: { skip: ["agent"] } }));
    expect(error.code).toBe("PHASE_OUTPUT_MISSING");
    expect(error.message).toContain("agent has no recorded agentId");
    expect(error.why).toContain("skipped");
  });

  it("gives each phase only the context it names", async () => {
    const { store } = await setup();
    let seen: string[] = [];
    const spy = define({
      id: "spy",
      title: "Spy",
      needs: ["name"],
      inputs: (ctx) => {
        seen = Object.keys(ctx);
        return {};
      },
      plan: () => [],
    });
    await run({ phases: [spy], context: world(), store });
    expect(seen).toEqual(["name"]);
  });
});

describe("selection", () => {
  it("an unknown phase id is an error naming the known ones, in order", async () => {
    const { store } = await setup();
    for (const selection of [{ skip: ["agnet"] }, { from: "nope" }, { only: "x" }]) {
      const error = await userErrorOf(run({ context: world(), store, selection }));
      expect(error.code).toBe("PHASE_UNKNOWN");
      expect(error.exitCode).toBe(2);
      expect(error.why).toBe("the phases are, in order: agent, install, verify");
    }
  });

  it("from and only together, or a chosen phase also skipped, conflict", async () => {
    const { store } = await setup();
    const refused = (selection: object) => userErrorOf(run({ context: world(), store, selection }));
    expect((await refused({ from: "agent", only: "verify" })).code).toBe("PHASE_SELECTION_CONFLICT");
    expect((await refused({ only: "verify", skip: ["verify"] })).code).toBe("PHASE_SELECTION_CONFLICT");
  });

  it("from a phase needs the phases before it recorded; then reruns it and everything after", async () => {
    const { store } = await setup();
    const context = world();
    const missing = await userErrorOf(run({ context, store, selection: { from: "install" } }));
    expect(missing.code).toBe("PHASE_PREREQUISITE_MISSING");
    expect(missing.message).toContain("needs agent done first");

    await run({ context, store });
    context.log.length = 0;
    await run({ context, store, selection: { from: "install" } });
    expect(context.log).toEqual(["install", "verify"]);
    context.log.length = 0;
    await run({ context, store, selection: { only: "install" } });
    expect(context.log).toEqual(["install"]);
  });
});

describe("planPhases (dry run)", () => {
  it("prints exactly the calls a real run then makes, and changes nothing", async () => {
    const { store } = await setup();
    const context = world();
    const planned = await planPhases({ name: "test run", phases: phases(), context, store });
    expect(context.log).toEqual([]);
    expect(await store.read()).toBeUndefined();
    // A new agent's id is not known before it exists: the preview says so.
    expect(planCallLines(planned.plan)).toEqual(["echo install v1 '<id of vm-1>'"]);
    expect(formatPlan(planned.plan)).toBe(
      [
        "# test run",
        "# [1/3] agent: Agent record",
        "# create agent vm-1",
        "# [2/3] install: Install the thing",
        "echo install v1 '<id of vm-1>'",
        "# record the install",
        "# [3/3] verify: Verify",
        "# check everything",
        "",
      ].join("\n"),
    );

    // Once the agent exists, the plan of what remains is exactly what the resumed run executes.
    await run({ context, store, selection: { only: "agent" } });
    context.version = "v3";
    const again = await planPhases({ name: "t", phases: phases(), context, store, resume: true });
    expect(again.decisions.map((d) => d.decision)).toEqual(["kept", "run", "run"]);
    const runner = createRecordingRunner({ inner: createExecaRunner() });
    await run({ context, store, runner, resume: true });
    expect(runner.calls.map((c) => c.line)).toEqual(planCallLines(again.plan));
  });
});

describe("state file", () => {
  it("a corrupt or hand-edited state file is refused with every problem located, and nothing changes", async () => {
    const { dir, store } = await setup();
    await dir.write({ "state/run.json": { content: "{ not json", mode: 0o600 } });
    let error = await userErrorOf(run({ context: world(), store, resume: true }));
    expect(error.code).toBe("RUN_STATE_INVALID");
    expect(error.exitCode).toBe(3);
    expect(error.problems[0]?.line).toBe(1);

    const context = world();
    await dir.remove();
    const fresh = await setup();
    await run({ context, store: fresh.store });
    const text = await readFile(fresh.store.path, "utf8");
    const edited = text
      .replace('"state": "done"', '"state": "finished"')
      .replace(/"inputsHash": "sha256:[a-f0-9]+"/, '"inputsHash": "md5:1"')
      .replace('"verify": {', '"verfy": {');
    await writeFile(fresh.store.path, edited);
    error = await userErrorOf(run({ context, store: fresh.store, resume: true }));
    expect(error.code).toBe("RUN_STATE_INVALID");
    expect(error.problems.map((p) => [p.path?.join("."), p.line !== undefined])).toEqual([
      ["phases.agent.state", true],
      ["phases.agent.inputsHash", true],
    ]);
    expect(await readFile(fresh.store.path, "utf8")).toBe(edited);
    const unknownPhase = text.replace('"verify": {', '"verfy": {');
    await writeFile(fresh.store.path, unknownPhase);
    error = await userErrorOf(fresh.store.read(phases().map((p) => p.id)));
    expect(error.problems).toEqual([
      expect.objectContaining({
        path: ["phases", "verfy"],
        message: expect.stringContaining("agent, install, verify"),
      }),
    ]);
    expect(error.problems[0]?.line).toBeGreaterThan(1);
  });
});

describe("status", () => {
  it("shows each phase in order with its state, and the next one", async () => {
    const { store } = await setup();
    expect(runStatus(phases(), undefined)).toMatchObject({ status: "none", next: "agent" });
    const context = world({ fail: new Set(["install"]) });
    await run({ context, store }).catch(() => {});
    const report = runStatus(phases(), await store.read(), { state: "free" });
    expect(report.status).toBe("failed");
    expect(report.phases.map((p) => [p.id, p.state])).toEqual([
      ["agent", "done"],
      ["install", "failed"],
      ["verify", "pending"],
    ]);
    expect(report.next).toBe("install");
    expect(report.lastError?.message).toContain("the install broke");
  });

  it("describes the phases for help text from the same list", () => {
    expect(describePhases(phases())).toBe(
      ["1. agent    Agent record", "2. install  Install the thing", "3. verify   Verify"].join("\n"),
    );
  });
});

describe("the dry run decides as the run does", () => {
  it("a guarded phase whose checkpoint is stale: the plan's decision is the run's", async () => {
    // Given a finished run, then the first phase run again: the later ones are stale
    const { store } = await setup();
    const context = world();
    await run({ context, store });
    await run({ context, store, selection: { only: "agent" } });
    expect((await store.read())?.phases.verify?.state).toBe("stale");
    // When verify is guarded, and the dry run and the run decide
    const list = phases();
    const verify = list[2] as Phase<Ctx>;
    list[2] = { ...verify, guard: () => "--skip-verify" };
    const planned = await planPhases({ name: "t", phases: list, context, store, resume: true });
    const events: PhaseEvent[] = [];
    await run({ phases: list, context, store, resume: true, onEvent: (e) => events.push(e) });
    // Then both keep its record: a guard skips the work, it does not undo what an earlier run did
    const ran = events.flatMap((e) =>
      e.type === "phase-kept" ? [[e.phase.id, "kept"]] : e.type === "phase-skipped" ? [[e.phase.id, "skipped"]] : [],
    );
    expect(ran).toContainEqual(["verify", "kept"]);
    expect(planned.decisions.find((d) => d.id === "verify")?.decision).toBe("kept");
  });
});

describe("typed outputs", () => {
  const Recorded = z.strictObject({
    agentId: z.string(),
    name: z.string(),
    // What an older version left out reads as the name, which it always was.
    clusterId: z.string().optional(),
  });
  const agent = define({
    id: "agent",
    title: "Agent record",
    needs: ["name"],
    outputs: Recorded.transform((value) => ({ ...value, clusterId: value.clusterId ?? value.name })),
    inputs: (ctx) => ({ name: ctx.name }),
    plan: (ctx) => [action("create-agent", `create agent ${ctx.name}`, { mutates: true })],
    actions: {
      "create-agent": async (ctx, _step, io) => {
        io.set("agentId", `id-${ctx.name}`);
        io.set("name", ctx.name);
        io.set("clusterId", ctx.name);
      },
    },
    preview: (ctx) => ({ name: ctx.name }),
  });
  const peer = define({
    id: "peer",
    title: "Peer",
    needs: ["log"],
    inputs: (_ctx, prior) => ({ agent: prior.known(agent, "agentId") ?? null }),
    plan: (_ctx, { prior }) => [
      exec({ command: "echo", args: ["peer", prior.known(agent, "agentId") ?? "<agent id>"] }, { mutates: true }),
    ],
    probe: async (ctx, _outputs, prior) => {
      // Typed by what the agent phase records: a string, never a cast.
      const id: string = prior.require(agent, "clusterId");
      ctx.log.push(`probe sees ${id}`);
      return { ok: true };
    },
  });

  it("each checkpoint's outputs are checked on read: a mismatch is located, an older record migrated", async () => {
    const { dir, store } = await setup();
    const context = world();
    await run({ phases: [agent, peer], context, store });
    const text = await readFile(store.path, "utf8");
    // Given a record an older version wrote (no clusterId): it reads as the name, and is written back so
    await writeFile(store.path, text.replace(/,\n\s*"clusterId": "vm-1"/, ""));
    expect(await readFile(store.path, "utf8")).not.toContain("clusterId");
    const result = await run({ phases: [agent, peer], context, store, resume: true });
    expect(result.kept).toEqual(["agent", "peer"]);
    expect(context.log).toEqual(["probe sees vm-1"]);
    expect(result.outputs.of(agent)?.clusterId).toBe("vm-1");
    expect((await store.read([agent, peer]))?.phases.agent?.outputs).toEqual({
      agentId: "id-vm-1",
      name: "vm-1",
      clusterId: "vm-1",
    });
    // Given a record edited by hand: refused with its line and field, nothing changed
    await dir.write({
      "state/run.json": { content: text.replace('"agentId": "id-vm-1"', '"agentId": 42'), mode: 0o600 },
    });
    const error = await userErrorOf(run({ phases: [agent, peer], context, store, resume: true }));
    expect(error.code).toBe("RUN_STATE_INVALID");
    expect(error.problems).toEqual([
      expect.objectContaining({ path: ["phases", "agent", "outputs", "agentId"], line: expect.any(Number) }),
    ]);
  });

  it("a phase that records what its own schema refuses is a bug, and no checkpoint is written", async () => {
    const { store } = await setup();
    const sloppy = define({
      ...agent,
      actions: { "create-agent": async (_ctx, _step, io) => io.set("agentId", "only the id") },
    });
    await expect(run({ phases: [sloppy], context: world(), store })).rejects.toThrow(
      /phase agent recorded outputs its schema refuses: name: /,
    );
    expect((await store.read())?.phases.agent?.state).toBe("failed");
  });

  it("in a dry run, an id the run creates is not known yet, and the plan says so", async () => {
    const { store } = await setup();
    const planned = await planPhases({ name: "t", phases: [agent, peer], context: world(), store });
    expect(planCallLines(planned.plan)).toEqual(["echo peer '<agent id>'"]);
  });
});

describe("stopping a run", () => {
  const waiting = (controller: AbortController) =>
    phase<object>()({
      id: "wait",
      title: "Wait",
      needs: [],
      inputs: () => ({}),
      plan: () => [action("wait", "wait for something", { mutates: false })],
      actions: {
        // A step the stop ends (as Ctrl-C ends the programs of the terminal's process group).
        wait: async () => {
          controller.abort(signal);
          throw new Error("the wait ended with exit code 130");
        },
      },
    });
  let signal = "SIGINT";

  it("a step that fails once the run was asked to stop is the stop: RUN_INTERRUPTED (SIGINT) or RUN_TERMINATED (SIGTERM), recorded", async () => {
    for (const [sent, code, exitCode] of [
      ["SIGINT", "RUN_INTERRUPTED", 130],
      ["SIGTERM", "RUN_TERMINATED", 143],
    ] as const) {
      signal = sent;
      const { store } = await setup();
      const controller = new AbortController();
      const error = await userErrorOf(
        runPhases({
          name: "t",
          phases: [waiting(controller)],
          context: {},
          store,
          runner: createRecordingRunner(),
          signal: controller.signal,
        }),
      );
      expect([error.code, error.exitCode]).toEqual([code, exitCode]);
      expect(error.why).toContain("the wait ended with exit code 130");
      const state = await store.read();
      expect(state?.status).toBe("interrupted");
      expect(state?.lastError).toMatchObject({ code, phase: "wait" });
    }
  });
  it("a stop asked while a phase observes (before its first step) runs none of its steps, and a stop during a step lets it finish", async () => {
    const made: string[] = [];
    const create = (controller: AbortController, stopWhile: "observe" | "step") =>
      phase<object>()({
        id: "agent",
        title: "Agent record",
        needs: [],
        inputs: () => ({}),
        observe: async () => {
          if (stopWhile === "observe") controller.abort("SIGTERM");
          return {};
        },
        plan: () => [action("create-agent", "create the agent", { mutates: true })],
        actions: {
          "create-agent": async (_ctx, _step, io) => {
            if (stopWhile === "step") controller.abort("SIGTERM");
            made.push(stopWhile);
            io.set("agentId", "a1");
          },
        },
      });
    const next = phase<object>()({
      id: "prechecks",
      title: "Prechecks",
      needs: [],
      inputs: () => ({}),
      plan: () => [action("check", "check", { mutates: false })],
      actions: { check: async () => void made.push("prechecks") },
    });
    for (const [stopWhile, stoppedIn, agentState] of [
      ["observe", "agent", "failed"],
      ["step", "prechecks", "done"],
    ] as const) {
      const { store } = await setup();
      const controller = new AbortController();
      const error = await userErrorOf(
        runPhases({
          name: "t",
          phases: [create(controller, stopWhile), next],
          context: {},
          store,
          runner: createRecordingRunner(),
          signal: controller.signal,
        }),
      );
      expect([error.code, error.exitCode]).toEqual(["RUN_TERMINATED", 143]);
      expect(error.message).toBe(`${stoppedIn}: stopped during phase ${stoppedIn}`);
      const state = await store.read();
      expect(state?.status).toBe("interrupted");
      expect(state?.lastError).toMatchObject({ code: "RUN_TERMINATED", phase: stoppedIn });
      expect(state?.phases.agent?.state).toBe(agentState);
    }
    // The step ran only when the stop came during it; no later step ran.
    expect(made).toEqual(["step"]);
  });
  it("a program Ctrl-C killed is the stop even before this process's own handler has run: RUN_INTERRUPTED, not the step's failure", async () => {
    for (const [sent, code] of [
      ["SIGINT", "RUN_INTERRUPTED"],
      ["SIGTERM", "RUN_TERMINATED"],
    ] as const) {
      const { store } = await setup();
      const killed = phase<object>()({
        id: "install",
        title: "Install",
        needs: [],
        inputs: () => ({}),
        plan: () => [exec({ command: "sh", args: ["install.sh"] }, { mutates: true })],
      });
      // The terminal signals the whole group: the child's exit is seen while the run's own signal is not aborted yet.
      const runner: ProcessRunner = {
        run: async () => {
          throw new CommandFailedError("sh install.sh", undefined, "", false, sent);
        },
      };
      const controller = new AbortController();
      const error = await userErrorOf(
        runPhases({ name: "t", phases: [killed], context: {}, store, runner, signal: controller.signal }),
      );
      expect(error.code).toBe(code);
      expect(error.why).toContain(`sh install.sh was stopped by ${sent}`);
      expect((await store.read())?.status).toBe("interrupted");
    }
  });
});
