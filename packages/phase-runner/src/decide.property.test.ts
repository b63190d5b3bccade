import { isUserError } from "@nodekit/errors";
import { createRecordingRunner } from "@nodekit/process";
import { testdir } from "@nodekit/test-utils";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createStateStore,
  type Decision,
  decide,
  hashInputs,
  type Phase,
  type PhaseCheckpoint,
  type PhaseEvent,
  type PhaseObservation,
  planPhases,
  type RunState,
  runPhases,
  STATE_API_VERSION,
} from "./index.ts";

// The dry run, the run and status take one decision (decide()). For any state, selection,
// guards, changed inputs and failing probes: what the dry run says it would do with each
// phase is what the run then does.

interface Ctx {
  version: readonly string[];
}

const AT = "2025-10-01T12:00:00.000Z";
const Recorded = fc.constantFrom<PhaseCheckpoint["state"] | "none">("none", "done", "stale", "skipped", "failed");

const world = fc.integer({ min: 1, max: 6 }).chain((count) =>
  fc.record({
    phases: fc.array(
      fc.record({
        guarded: fc.boolean(),
        readOnly: fc.boolean(),
        probeOk: fc.boolean(),
        inputsChanged: fc.boolean(),
        recorded: Recorded,
      }),
      { minLength: count, maxLength: count },
    ),
    skip: fc.subarray(Array.from({ length: count }, (_, index) => index)),
    chosen: fc.option(fc.tuple(fc.constantFrom("from", "only"), fc.integer({ min: 0, max: count - 1 })), {
      nil: undefined,
    }),
    resume: fc.boolean(),
    restart: fc.boolean(),
    hasState: fc.boolean(),
  }),
);

type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

function phasesOf(spec: World): Phase<Ctx>[] {
  return spec.phases.map((p, index) => ({
    id: `p${index}`,
    title: `Phase ${index}`,
    needs: ["version"],
    invalidatesLater: !p.readOnly,
    ...(p.guarded ? { guard: () => `--skip-p${index}` } : {}),
    inputs: (ctx: Ctx) => ({ index, version: ctx.version[index] ?? "v1" }),
    plan: () => [],
    probe: async () => (p.probeOk ? { ok: true as const } : { ok: false as const, reason: "its work is gone" }),
  }));
}

function stateOf(spec: World): RunState {
  const phases: Record<string, PhaseCheckpoint> = {};
  for (const [index, p] of spec.phases.entries()) {
    const inputsHash = hashInputs({ index, version: "v1" });
    if (p.recorded === "done" || p.recorded === "stale") {
      phases[`p${index}`] = { state: p.recorded, finishedAt: AT, inputsHash, outputs: {}, runs: 1 };
    } else if (p.recorded === "skipped") phases[`p${index}`] = { state: "skipped", reason: "earlier", runs: 0 };
    else if (p.recorded === "failed") {
      phases[`p${index}`] = { state: "failed", finishedAt: AT, runs: 1, error: { code: "X", message: "broke" } };
    }
  }
  return {
    apiVersion: STATE_API_VERSION,
    kind: "RunState",
    name: "t",
    runId: "r0",
    createdAt: AT,
    updatedAt: AT,
    status: "failed",
    phases,
    meta: {},
  };
}

/** The outcome as a list of [phase, decision]: what the run did (from its events), or the error it refused with. */
const kinds = (decisions: ReadonlyArray<{ id: string; decision: string }>) => decisions.map((d) => [d.id, d.decision]);

describe("the dry run and the run decide alike (property)", () => {
  it("for any state and selection, the plan's decisions are the run's", async () => {
    await fc.assert(
      fc.asyncProperty(world, async (spec) => {
        const dir = await testdir({});
        try {
          const store = createStateStore({ path: dir.path("state/run.json") });
          if (spec.hasState) await store.write(stateOf(spec));
          const phases = phasesOf(spec);
          const context: Ctx = { version: spec.phases.map((p) => (p.inputsChanged ? "v2" : "v1")) };
          const selection = {
            skip: spec.skip.map((index) => `p${index}`),
            ...(spec.chosen === undefined ? {} : { [spec.chosen[0]]: `p${spec.chosen[1]}` }),
          };
          const common = { name: "t", phases, context, store, selection, resume: spec.resume, restart: spec.restart };
          const refused = (error: unknown) => {
            if (!isUserError(error)) throw error;
            return error.code;
          };
          const planned = await planPhases(common).catch(refused);
          const events: PhaseEvent[] = [];
          const ran = await runPhases({
            ...common,
            runner: createRecordingRunner(),
            lock: false,
            onEvent: (event) => events.push(event),
          }).catch(refused);
          if (typeof planned === "string" || typeof ran === "string") {
            expect(typeof ran === "string" ? ran : "ran").toBe(typeof planned === "string" ? planned : "planned");
            return;
          }
          // What the run did, phase by phase, as its events tell it.
          const done = events.flatMap((event) =>
            event.type === "phase-started"
              ? [[event.phase.id, "run"]]
              : event.type === "phase-kept"
                ? [[event.phase.id, "kept"]]
                : event.type === "phase-skipped"
                  ? [[event.phase.id, "skipped"]]
                  : [],
          );
          expect(done).toEqual(kinds(planned.decisions));
          expect(ran.decisions).toEqual(planned.decisions);
        } finally {
          await dir.remove();
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});

describe("decide", () => {
  const observed = fc.record({
    guard: fc.option(fc.constant("guarded"), { nil: undefined }),
    inputsHash: fc.option(fc.constantFrom(hashInputs({ v: 1 }), hashInputs({ v: 2 })), { nil: undefined }),
    probe: fc.option(fc.constantFrom({ ok: true as const }, { ok: false as const, reason: "gone" }), {
      nil: undefined,
    }),
  });

  it("decides in order: the decisions before the first one that needs an observation never change as more arrive", () => {
    fc.assert(
      fc.property(
        world,
        fc.array(fc.option(observed, { nil: undefined }), { minLength: 6, maxLength: 6 }),
        fc.array(observed, { minLength: 6, maxLength: 6 }),
        (spec, some, more) => {
          const phases = spec.phases.map((p, index) => ({ id: `p${index}`, invalidatesLater: !p.readOnly }));
          const state = spec.hasState ? stateOf(spec) : undefined;
          // A selection that names a phase both to run and to skip is refused before deciding.
          const selection = {
            skip: spec.skip.filter((index) => index !== spec.chosen?.[1]).map((index) => `p${index}`),
            ...(spec.chosen === undefined ? {} : { [spec.chosen[0]]: `p${spec.chosen[1]}` }),
          };
          const partial = new Map<string, PhaseObservation>();
          some.forEach((entry, index) => {
            if (entry !== undefined) partial.set(`p${index}`, entry);
          });
          const complete = new Map<string, PhaseObservation>(partial);
          more.forEach((entry, index) => {
            const key = `p${index}`;
            const earlier = complete.get(key);
            complete.set(key, {
              guard: earlier === undefined ? entry.guard : earlier.guard,
              inputsHash: earlier?.inputsHash ?? entry.inputsHash ?? hashInputs({ v: 1 }),
              probe: earlier?.probe ?? entry.probe ?? { ok: true },
            });
          });
          const first = decide(phases, state, selection, partial);
          const settled = first.filter((d) => d.action !== "observe");
          expect(first.filter((d) => d.action === "observe").length).toBeLessThanOrEqual(1);
          if (first.at(-1)?.action === "observe") expect(settled.length).toBe(first.length - 1);
          const later = decide(phases, state, selection, complete);
          // With every fact known, every phase is decided.
          expect(later.map((d: Decision) => d.action)).not.toContain("observe");
          expect(later.slice(0, settled.length)).toEqual(settled);
        },
      ),
    );
  });
});
