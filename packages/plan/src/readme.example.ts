// Generated from packages/plan/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { createPlan, exec, formatPlan, runPlan } from "@nodekit/plan";
import { createExecaRunner } from "@nodekit/process";

const kubeconfig = "lab.kubeconfig";
const plan = createPlan("install the demo stack", [
  {
    id: "namespace",
    title: "the demo namespace",
    steps: [exec({ command: "kubectl", args: ["--kubeconfig", kubeconfig, "create", "namespace", "demo"] }, { mutates: true })],
  },
  {
    id: "check",
    title: "what is there now",
    steps: [exec({ command: "kubectl", args: ["--kubeconfig", kubeconfig, "get", "namespaces"] }, { mutates: false })],
  },
]);

if (process.argv.includes("--dry-run")) process.stdout.write(formatPlan(plan));
else await runPlan(plan, { runner: createExecaRunner(), onEvent: (event) => console.error(event.type) });

export {};
