/**
 * The phase runner's own cost per phase: a run of N phases whose only step is an action
 * that does nothing, so all that is measured is the runner (selection, the inputs' hash,
 * planning, the events, and the checkpoint: one atomic write with fsync per phase) —
 * against a real state file in a temporary directory. Median of the rounds, in ms per phase.
 *
 *   node --conditions=source tooling/bench/phase-runner.ts [--rounds N] [--phases N] [--json]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStateStore, type Phase, phase, runPhases } from "@nodekit/phase-runner";
import { action } from "@nodekit/plan";
import { createRecordingRunner } from "@nodekit/process";

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? "") || 15;
const count = Number(args[args.indexOf("--phases") + 1] ?? "") || 50;
const define = phase<{ version: string }>();
const phases: Phase<{ version: string }>[] = Array.from({ length: count }, (_, index) =>
  define({
    id: `p${index}`,
    title: `Phase ${index}`,
    needs: ["version"],
    inputs: (ctx) => ({ version: ctx.version, index }),
    plan: () => [action("noop", `phase ${index}`, { mutates: false })],
    actions: { noop: async (_ctx, _step, io) => io.set("index", index) },
  }),
);

const perPhase: number[] = [];
for (let round = 0; round < rounds + 2; round++) {
  const dir = await mkdtemp(join(tmpdir(), "phase-runner-bench-"));
  try {
    const store = createStateStore({ path: join(dir, "state.json") });
    const started = performance.now();
    await runPhases({ name: "bench", phases, context: { version: "v1" }, store, runner: createRecordingRunner() });
    // The first two rounds warm up (module loading, the JIT).
    if (round >= 2) perPhase.push((performance.now() - started) / count);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
perPhase.sort((a, b) => a - b);
const median = perPhase[Math.floor(perPhase.length / 2)] ?? 0;
if (args.includes("--json")) process.stdout.write(`${JSON.stringify({ phases: count, rounds, msPerPhase: median })}\n`);
else
  process.stdout.write(
    `phase runner: ${median.toFixed(2)} ms per phase (median of ${rounds} runs of ${count} phases)\n`,
  );
