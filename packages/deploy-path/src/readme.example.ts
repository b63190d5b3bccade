// Generated from packages/deploy-path/README.md by tooling/docs/generate.ts: edit the README, then
// run ./run pnpm docs:gen. `pnpm typecheck` compiles it, so the README's example stays true.
import { loadDeployPath, planDeployPath } from "@nodekit/deploy-path";
import { formatPlan } from "@nodekit/plan";

const loaded = await loadDeployPath("deploy/nico");
if (loaded.deployPath === undefined) {
  for (const problem of loaded.problems) console.error(problem.source, problem.line, problem.path, problem.message);
} else {
  const plan = planDeployPath(loaded.deployPath, { target: { kubeconfig: "site.kubeconfig" }, helmEnv: { HOME: "/tmp/helm-home" } });
  process.stdout.write(formatPlan(plan)); // one copy-pasteable kubectl/helm line per call
}

export {};
