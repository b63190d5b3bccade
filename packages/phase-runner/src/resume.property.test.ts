import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { writeFileSafe } from "@nodekit/fs-safe";
import { action, exec } from "@nodekit/plan";
import type { ProcessRunner } from "@nodekit/process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AtomicWrite, createStateStore, type Phase, phase, runPhases } from "./index.ts";

// Kill the run at random points — while a phase works, after its work but before its
// checkpoint, before, in the middle of and right after a checkpoint write — then resume
// (and maybe be killed again), until a run completes. Whatever the kill points: the state
// file is always readable, no phase with a checkpoint is ever redone, none is skipped, and
// each phase runs only after the one before it is done.

class Killed extends Error {}

const killed = (error: unknown): boolean =>
  error instanceof Killed || (error instanceof Error && error.cause !== undefined && killed(error.cause));

type KillAt = "work" | "before-write" | "mid-write" | "after-write";

interface Ctx {
  world: World;
}

interface World {
  /** Every execution of a phase's work, in order, with the run it happened in. */
  executions: Array<{ run: number; id: string; completed: boolean }>;
  run: number;
  ops: number;
  killAt: { op: number; mode: KillAt } | undefined;
  dead: boolean;
}

/** Counts an operation, and kills the run when it is the chosen one of the chosen kind. */
function tick(world: World, kinds: readonly KillAt[]): KillAt | undefined {
  if (world.dead) throw new Killed("the process is gone");
  world.ops++;
  const chosen = world.killAt;
  if (chosen !== undefined && world.ops >= chosen.op && kinds.includes(chosen.mode)) {
    world.killAt = undefined;
    return chosen.mode;
  }
  return undefined;
}

function makePhases(count: number): Phase<Ctx>[] {
  return Array.from({ length: count }, (_, index) =>
    phase<Ctx>()({
      id: `p${index}`,
      title: `Phase ${index}`,
      needs: ["world"],
      inputs: () => ({ index }),
      plan: () => [
        exec({ command: "work", args: [`p${index}`] }, { mutates: true }),
        action("finish", `finish p${index}`, { mutates: true }),
      ],
      actions: {
        finish: async ({ world }, _step, io) => {
          const execution = { run: world.run, id: `p${index}`, completed: false };
          world.executions.push(execution);
          if (tick(world, ["work"]) === "work") {
            world.dead = true;
            throw new Killed(`killed during the work of p${index}`);
          }
          execution.completed = true;
          io.set("done", index);
        },
      },
    }),
  );
}

function killingWrite(world: World): AtomicWrite {
  return async (path, data, mode) => {
    const kill = tick(world, ["before-write", "mid-write", "after-write"]);
    if (kill === "before-write") {
      world.dead = true;
      throw new Killed("killed before the write");
    }
    if (kill === "mid-write") {
      // What writeFileSafe leaves when killed mid-way: a partial temporary file beside the state.
      await writeFile(
        join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`),
        data.slice(0, Math.floor(data.length / 2)),
      );
      world.dead = true;
      throw new Killed("killed in the middle of the write");
    }
    await writeFileSafe(path, data, { mode });
    if (kill === "after-write") {
      world.dead = true;
      throw new Killed("killed right after the write");
    }
  };
}

const runner = (world: World): ProcessRunner => ({
  async run() {
    if (tick(world, ["work"]) === "work") {
      world.dead = true;
      throw new Killed("killed while a call ran");
    }
    return { exitCode: 0, stdout: "", stderr: "" };
  },
});

describe("crash and resume (property)", () => {
  it("never redoes a checkpointed phase, never skips one, and always leaves a readable state", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.array(
          fc.record({
            op: fc.integer({ min: 1, max: 20 }),
            mode: fc.constantFrom<KillAt>("work", "before-write", "mid-write", "after-write"),
          }),
          { maxLength: 5 },
        ),
        async (count, kills) => {
          const dir = await mkdtemp(join(tmpdir(), "phase-runner-property-"));
          try {
            const world: World = { executions: [], run: 0, ops: 0, killAt: undefined, dead: false };
            const phases = makePhases(count);
            const store = createStateStore({ path: join(dir, "state.json"), write: killingWrite(world) });
            const reader = createStateStore({ path: join(dir, "state.json") });
            const ids = phases.map((p) => p.id);
            /** Phases with a checkpoint when each run ended. */
            const durable = new Set<string>();
            const plan = [...kills, undefined];
            for (const [attempt, kill] of plan.entries()) {
              world.run = attempt;
              world.ops = 0;
              world.dead = false;
              world.killAt = kill;
              const before = world.executions.length;
              let completed = false;
              try {
                await runPhases({
                  name: "property",
                  phases,
                  context: { world },
                  store,
                  runner: runner(world),
                  resume: true,
                  lock: false,
                });
                completed = true;
              } catch (error) {
                if (!killed(error)) throw error;
              }
              // Nothing checkpointed before this run was redone in it.
              const redone = world.executions.slice(before).filter((e) => durable.has(e.id));
              expect(redone).toEqual([]);
              // The state is always readable, whatever was being written when the run died.
              const state = await reader.read(ids);
              for (const id of ids) if (state?.phases[id]?.state === "done") durable.add(id);
              if (completed) {
                expect(state?.status).toBe("succeeded");
                break;
              }
            }
            // The last run has no kill, so it completes: every phase is done.
            const final = await reader.read(ids);
            expect(ids.map((id) => final?.phases[id]?.state)).toEqual(ids.map(() => "done"));
            // Each phase's work completed, and only after the one before it had (in order, none skipped).
            for (const [index, id] of ids.entries()) {
              const first = world.executions.findIndex((e) => e.id === id && e.completed);
              expect(first).toBeGreaterThanOrEqual(0);
              if (index > 0) {
                const previous = world.executions.findIndex((e) => e.id === ids[index - 1] && e.completed);
                expect(previous).toBeLessThan(first);
              }
            }
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
