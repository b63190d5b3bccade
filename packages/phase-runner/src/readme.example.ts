// Generated from packages/phase-runner/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { action, exec, formatPlan } from "@nodekit/plan";
import { createExecaRunner } from "@nodekit/process";
import { createStateStore, phase, planPhases, runPhases } from "@nodekit/phase-runner";

const define = phase<{ greeting: string }>();
const phases = [
  define({ id: "hello", title: "Say hello", needs: ["greeting"], inputs: (ctx) => ({ greeting: ctx.greeting }),
    plan: (ctx) => [exec({ command: "echo", args: [ctx.greeting] }, { mutates: false })] }),
  define({ id: "record", title: "Record it", needs: [], inputs: () => ({}),
    plan: () => [action("note", "note that we said it", { mutates: true })],
    actions: { note: async (_ctx, _step, io) => io.set("said", true) } }),
];
const store = createStateStore({ path: "/tmp/phase-runner-example/state.json" });
const options = { name: "example", phases, context: { greeting: "hi" }, store, resume: true };
console.log(formatPlan((await planPhases(options)).plan)); // the dry run: what the run below executes
const { ran, kept } = await runPhases({ ...options, runner: createExecaRunner() });
console.log({ ran, kept }); // run it again: both are kept, nothing is redone

export {};
