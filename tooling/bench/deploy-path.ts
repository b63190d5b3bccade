/**
 * Dry run of a 500-item deploy path (target < 0.3 s): read and validate the whole path
 * (nvke-deploy.yaml, 250 chart items with pins and values, 250 manifests items), plan it and
 * format the plan, in process, from a cold start of each round's read.
 *
 *   node --conditions=source tooling/bench/deploy-path.ts [--rounds N] [--items N] [--json]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadDeployPath, planDeployPath } from "@nodekit/deploy-path";
import { formatPlan } from "@nodekit/plan";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => Number(args[args.indexOf(name) + 1] ?? "") || fallback;
const rounds = option("--rounds", 15);
const count = option("--items", 500);
const dir = mkdtempSync(join(tmpdir(), "nodekit-bench-deploy-path-"));

const items: string[] = [];
for (let i = 0; i < count; i++) {
  const name = `item-${i}`;
  mkdirSync(join(dir, name));
  items.push(`    - name: ${name}\n      namespace: ns-${i % 20}${i > 0 ? `\n      dependsOn: [item-${i - 1}]` : ""}`);
  if (i % 2 === 0) {
    writeFileSync(
      join(dir, name, "chart-pin.yaml"),
      `repository: oci://registry.example.test/charts\nchart: c${i}\nversion: 1.${i}.0\n`,
    );
    writeFileSync(join(dir, name, "values.yaml"), `replicas: 2\nimage: registry.example.test/app:${i}\n`);
  } else {
    writeFileSync(
      join(dir, name, "app.yaml"),
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-${i}\nspec:\n  replicas: 1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\n`,
    );
  }
}
writeFileSync(
  join(dir, "nvke-deploy.yaml"),
  `apiVersion: deploy.nodekit.dev/v1alpha1\nkind: DeployPath\nmetadata:\n  name: bench\nspec:\n  items:\n${items.join("\n")}\n`,
);

async function once(): Promise<{ ms: number; lines: number }> {
  const started = performance.now();
  const loaded = await loadDeployPath(dir);
  if (loaded.deployPath === undefined) throw new Error(`bench path does not validate: ${loaded.problems[0]?.message}`);
  const plan = planDeployPath(loaded.deployPath, { target: { kubeconfig: "/k" }, helmEnv: { HOME: "/h" } });
  const text = formatPlan(plan);
  return { ms: performance.now() - started, lines: text.split("\n").length };
}

try {
  await once();
  await once();
  const times: number[] = [];
  let lines = 0;
  for (let round = 0; round < rounds; round++) {
    const result = await once();
    times.push(result.ms);
    lines = result.lines;
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  const result = {
    case: `dry run of a ${count}-item deploy path`,
    rounds,
    medianMs: Math.round(median * 10) / 10,
    maxMs: Math.round((times.at(-1) ?? 0) * 10) / 10,
    lines,
    targetMs: 300,
    met: median < 300,
  };
  if (args.includes("--json")) process.stdout.write(`${JSON.stringify(result)}\n`);
  else
    process.stdout.write(
      `${result.case}: median ${result.medianMs} ms, max ${result.maxMs} ms over ${rounds} rounds (${lines} plan lines); target < 300 ms: ${result.met ? "met" : "NOT met"}\n`,
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
