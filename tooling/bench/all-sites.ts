/**
 * `nvkectl get clusters --all-sites` over 20 sites against the same read of one site (issue 24
 * item 5: ≤ 1.5×). A real kube-apiserver (tooling/testenv) and 20 NVKE controller emulators
 * on it, each its own process with auth on (TokenReview) and 20 seeded clusters, each a
 * configured site; the token cache is primed, so what is measured is the read: one process
 * asking 20 controllers at once (a bounded number at a time) against one process asking one.
 * The built CLI, a subprocess per run, in interleaved rounds each in a new random order, after
 * two warm-up runs per case; `node -e 0` runs alongside to show the machine's load.
 *
 *   node tooling/bench/all-sites.ts [--rounds N] [--sites N] [--json]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type ManagementPlane, startManagementPlane } from "./src/management-plane.ts";
import { median, shuffled } from "./src/rounds.ts";

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const rounds = Number(option("--rounds") ?? "") || 15;
const siteCount = Number(option("--sites") ?? "") || 20;
const asJson = args.includes("--json");
/** Clusters each site lists (bench.ts's small read). */
const CLUSTERS = 20;
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const node = process.execPath;
const nvkectl = join(root, "apps/nvkectl/bin/run.js");
const kubectl = spawnSync("sh", ["-c", "command -v kubectl"], { encoding: "utf8" }).stdout.trim();
const work = mkdtempSync(join(tmpdir(), "nodekit-bench-all-sites-"));
const env = { PATH: process.env.PATH ?? "", HOME: work, XDG_CONFIG_HOME: join(work, "config"), NO_COLOR: "1" };

function fail(message: string): never {
  process.stderr.write(`all-sites bench: ${message}\n`);
  process.exit(1);
}
if (kubectl === "") fail("kubectl is not on PATH (the testenv's kube-apiserver is set up with it)");

let plane: ManagementPlane | undefined;
process.on("exit", () => {
  plane?.stop();
  rmSync(work, { recursive: true, force: true });
});
try {
  plane = startManagementPlane({ root, work, kubectl, nvkectl, env });
} catch (error) {
  fail((error as Error).message);
}
const { startSite } = plane;

const say = (line: string) => process.stderr.write(`all-sites bench: ${line}\n`);
say(`testenv up; starting ${siteCount} emulators`);
const names = Array.from({ length: siteCount }, (_, n) => `s${String(n).padStart(2, "0")}`);
try {
  await Promise.all(names.map((name) => startSite(name, CLUSTERS)));
} catch (error) {
  fail((error as Error).message);
}

interface Case {
  name: string;
  argv: string[];
}
const one = names[0] ?? "s00";
const cases: Case[] = [
  { name: "node -e 0", argv: [node, "-e", "0"] },
  {
    name: "nvkectl get clusters -o json --site (1 site)",
    argv: [node, nvkectl, "get", "clusters", "-o", "json", "--site", one],
  },
  {
    name: `nvkectl get clusters -o json --all-sites (${siteCount} sites)`,
    argv: [node, nvkectl, "get", "clusters", "-o", "json", "--all-sites"],
  },
  { name: "nvkectl get clusters --site (1 site, table)", argv: [node, nvkectl, "get", "clusters", "--site", one] },
  {
    name: `nvkectl get clusters --all-sites (${siteCount} sites, table)`,
    argv: [node, nvkectl, "get", "clusters", "--all-sites"],
  },
];

function timeOnce(c: Case): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(c.argv[0] ?? "", c.argv.slice(1), { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) fail(`${c.name} exited ${result.status}: ${result.stderr?.toString().slice(0, 500)}`);
  return ms;
}

say("sites configured; priming the token cache");
// Prime every site's token (minted once, then cached), and check that every site answers.
const primed = spawnSync(node, [nvkectl, "get", "clusters", "-o", "json", "--all-sites"], { env, encoding: "utf8" });
if (primed.status !== 0) fail(`priming the token cache: ${primed.stderr}`);
const listed = (JSON.parse(primed.stdout) as { items: unknown[] }).items.length;
if (listed !== siteCount * CLUSTERS) fail(`--all-sites listed ${listed} clusters, not ${siteCount * CLUSTERS}`);

say(`measuring: ${rounds} rounds`);
const loadBefore = loadavg()[0] ?? 0;
for (const c of cases) for (let i = 0; i < 2; i++) timeOnce(c);
const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < rounds; round++) for (const c of shuffled(cases)) samples.get(c.name)?.push(timeOnce(c));
const loadAfter = loadavg()[0] ?? 0;

const medians = new Map([...samples].map(([name, values]) => [name, median(values)]));
const ratioOf = (many: string, single: string) => (medians.get(many) ?? 0) / (medians.get(single) ?? 1);
const jsonRatio = ratioOf(cases[2]?.name ?? "", cases[1]?.name ?? "");
const tableRatio = ratioOf(cases[4]?.name ?? "", cases[3]?.name ?? "");

if (asJson) {
  process.stdout.write(
    `${JSON.stringify({ rounds, sites: siteCount, clustersPerSite: CLUSTERS, medians: Object.fromEntries(medians), jsonRatio, tableRatio, loadBefore, loadAfter })}\n`,
  );
} else {
  const lines = [
    `${rounds} rounds, ${siteCount} sites of ${CLUSTERS} clusters each, load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}`,
    "",
    "| case | median ms |",
    "|---|---:|",
    ...[...medians].map(([name, ms]) => `| \`${name}\` | ${ms.toFixed(1)} |`),
    "",
    `--all-sites (${siteCount}) ÷ one site, -o json: ${jsonRatio.toFixed(2)} (target ≤ 1.5: ${jsonRatio <= 1.5 ? "met" : "missed"})`,
    `--all-sites (${siteCount}) ÷ one site, table:   ${tableRatio.toFixed(2)} (target ≤ 1.5: ${tableRatio <= 1.5 ? "met" : "missed"})`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
// The emulators' pipes keep the event loop alive: stop them (the exit handler) and end.
process.exit(0);
