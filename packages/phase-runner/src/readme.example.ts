// Generated from packages/phase-runner/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { action, exec, formatPlan } from "@nodekit/plan";
import { createExecaRunner } from "@nodekit/process";
import { createStateStore, phase, planPhases, runPhases } from "@nodekit/phase-runner";
import * as z from "zod";

const define = phase<{ greeting: string }>();
const hello = define({ id: "hello", title: "Say hello", needs: ["greeting"], inputs: (ctx) => ({ greeting: ctx.greeting }),
  plan: (ctx) => [exec({ command: "echo", args: [ctx.greeting] }, { mutates: false })],
  outputs: z.object({ said: z.string() }), recorded: (ctx) => ({ said: ctx.greeting }),
  preview: (ctx) => ({ said: ctx.greeting }) }); // what later phases plan with in a dry run
const record = define({ id: "record", title: "Record it", needs: [], inputs: (_ctx, prior) => ({ said: prior.require(hello, "said") }),
  plan: () => [action("note", "note that we said it", { mutates: true })],
  actions: { note: async (_ctx, _step, io) => io.set("noted", true) } });
const store = createStateStore({ path: "/tmp/phase-runner-example/state.json" });
const options = { name: "example", phases: [hello, record], context: { greeting: "hi" }, store, resume: true };
console.log(formatPlan((await planPhases(options)).plan)); // the dry run: what the run below executes
const { ran, kept } = await runPhases({ ...options, runner: createExecaRunner() });
console.log({ ran, kept }); // run it again: both are kept, nothing is redone

export {};
