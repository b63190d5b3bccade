/**
 * Start-up benchmark: runs every case in interleaved rounds (so machine noise hits all of
 * them alike), then prints medians and ratios against `kubectl version --client` and
 * `node -e 0` measured in the same run, plus the import cost of each runtime dependency.
 *
 *   ./run pnpm bench [--rounds N] [--json]
 *
 * Targets (from the issues) are checked and reported, never asserted in tests.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? "") || 15;
const asJson = args.includes("--json");
const node = process.execPath;
const work = mkdtempSync(join(tmpdir(), "nodekit-bench-"));
const env = { PATH: process.env.PATH ?? "", HOME: work, XDG_CONFIG_HOME: join(work, "config"), NO_COLOR: "1" };

interface Case {
  name: string;
  argv: string[];
  cwd?: string;
}

function which(program: string): string | undefined {
  const result = spawnSync("sh", ["-c", `command -v ${program}`], { encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function bigCsv(rows: number): string {
  const lines = ["name,ip,tpm_ek_thumbprint"];
  for (let i = 0; i < rows; i++) {
    const thumb = i % 3 === 0 ? i.toString(16).padStart(8, "0").repeat(8) : "";
    lines.push(`host-${i},10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},${thumb}`);
  }
  return `${lines.join("\n")}\n`;
}

const nvkectl = join(root, "apps/nvkectl/bin/run.js");
const nr = join(root, "apps/nr/bin/run.js");
const hosts10k = join(work, "hosts-10000.csv");
writeFileSync(hosts10k, bigCsv(10_000));
const kubectl = which("kubectl");

const cases: Case[] = [
  { name: "node -e 0", argv: [node, "-e", "0"] },
  ...(kubectl ? [{ name: "kubectl version --client", argv: [kubectl, "version", "--client"] }] : []),
  { name: "nvkectl --version", argv: [node, nvkectl, "--version"] },
  { name: "nvkectl --help", argv: [node, nvkectl, "--help"] },
  { name: "nr --version", argv: [node, nr, "--version"] },
  {
    name: "nvkectl sitespec generate (examples/hosts.csv)",
    argv: [node, nvkectl, "sitespec", "generate", "--hosts", join(root, "examples/hosts.csv")],
  },
  {
    name: "nvkectl sitespec generate (10,000 rows)",
    argv: [node, nvkectl, "sitespec", "generate", "--hosts", hosts10k],
  },
];

function timeOnce(c: Case): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(c.argv[0] ?? "", c.argv.slice(1), {
    cwd: c.cwd ?? root,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0)
    throw new Error(`${c.name} exited ${result.status}: ${result.stderr?.toString().slice(0, 500)}`);
  return ms;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

// Warm-up: fills Node's compile cache and the OS page cache, as a user's second run would.
for (const c of cases) for (let i = 0; i < 2; i++) timeOnce(c);
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < rounds; round++) for (const c of cases) samples.get(c.name)?.push(timeOnce(c));
const medians = new Map([...samples].map(([name, values]) => [name, median(values)]));

// Import cost of each runtime dependency: median of `node -e import(dep)` minus `node -e 0`.
const deps: Array<{ name: string; from: string }> = [
  { name: "@oclif/core", from: "packages/cli-kit" },
  { name: "execa", from: "packages/process" },
  { name: "zod", from: "packages/sitespec" },
  { name: "js-yaml", from: "packages/sitespec" },
  { name: "csv-parse/sync", from: "packages/sitespec" },
  { name: "write-file-atomic", from: "packages/site-config" },
  { name: "@kubernetes/client-node", from: "packages/k8s-auth" },
  { name: "ky", from: "packages/nvke-client" },
];
const importCosts: Array<{ name: string; ms: number }> = [];
const baseline = medians.get("node -e 0") ?? 0;
for (const dep of deps) {
  const c: Case = {
    name: dep.name,
    argv: [node, "--input-type=module", "-e", `await import(${JSON.stringify(dep.name)})`],
    cwd: join(root, dep.from),
  };
  try {
    timeOnce(c);
  } catch {
    continue; // not a dependency yet
  }
  const values: number[] = [];
  for (let i = 0; i < Math.max(5, Math.floor(rounds / 2)); i++) values.push(timeOnce(c));
  importCosts.push({ name: dep.name, ms: median(values) - baseline });
}
rmSync(work, { recursive: true, force: true });

const kubectlMs = medians.get("kubectl version --client");
const ratio = (name: string, against: number | undefined) => {
  const value = medians.get(name);
  return value !== undefined && against ? value / against : undefined;
};
const targets = [
  {
    what: "nvkectl --version ≤ 2.5× kubectl version --client",
    value: ratio("nvkectl --version", kubectlMs),
    limit: 2.5,
  },
  {
    what: "sitespec generate (small) ≤ 3× kubectl version --client",
    value: ratio("nvkectl sitespec generate (examples/hosts.csv)", kubectlMs),
    limit: 3,
  },
  {
    what: "sitespec generate (10,000 rows) < 1000 ms",
    value: medians.get("nvkectl sitespec generate (10,000 rows)"),
    limit: 1000,
  },
];

if (asJson) {
  process.stdout.write(
    `${JSON.stringify({ rounds, node: process.version, medians: Object.fromEntries(medians), importCosts, targets }, null, 2)}\n`,
  );
} else {
  const out: string[] = [`start-up, median of ${rounds} interleaved rounds (node ${process.version})`, ""];
  const width = Math.max(...cases.map((c) => c.name.length));
  out.push(`${"case".padEnd(width)}   median ms   × node -e 0   × kubectl`);
  for (const c of cases) {
    const ms = medians.get(c.name) ?? 0;
    const vsNode = baseline ? (ms / baseline).toFixed(2) : "-";
    const vsKubectl = kubectlMs ? (ms / kubectlMs).toFixed(2) : "-";
    out.push(
      `${c.name.padEnd(width)}   ${ms.toFixed(1).padStart(9)}   ${vsNode.padStart(11)}   ${vsKubectl.padStart(9)}`,
    );
  }
  out.push("", "import cost of runtime dependencies (median ms over node -e 0)");
  for (const dep of importCosts) out.push(`  ${dep.name.padEnd(26)} ${dep.ms.toFixed(1).padStart(7)}`);
  out.push("", "targets");
  for (const t of targets) {
    const shown = t.value === undefined ? "n/a" : t.value.toFixed(2);
    const verdict = t.value === undefined ? "not measured" : t.value <= t.limit ? "met" : "MISSED";
    out.push(`  ${t.what}: ${shown} — ${verdict}`);
  }
  process.stdout.write(`${out.join("\n")}\n`);
}
