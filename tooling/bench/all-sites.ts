/**
 * `nvkectl get clusters --all-sites` over 20 sites against the same read of one site (issue 24
 * item 5: ≤ 1.5×). A real kube-apiserver (tooling/testenv) and 20 NVKE controller emulators
 * on it, each its own process with auth on (TokenReview) and 20 seeded clusters, each a
 * configured site; the token cache is primed, so what is measured is the read: one process
 * asking 20 controllers at once (a bounded number at a time) against one process asking one.
 * The built CLI, a subprocess per run, in interleaved rounds each in a new random order, after
 * two warm-up runs per case; `node -e 0` runs alongside to show the machine's load. Besides
 * the wall time, each case's CPU time: the CLI's own (its user and system time, as the bench
 * reaps it) and that of the bench's other descendants, the 20 emulators (from /proc), during it.
 * `--against NAME=CHECKOUT` runs another built checkout's nvkectl in the same rounds.
 *
 *   node tooling/bench/all-sites.ts [--rounds N] [--sites N] [--json] [--against NAME=CHECKOUT]...
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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
const against = args
  .flatMap((arg, i) => (args[i - 1] === "--against" ? [arg] : []))
  .map((spec) => {
    const [name = "", dir = ""] = spec.split("=");
    return { name, dir: resolve(dir) };
  });
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
const builds = [
  { label: "", bin: nvkectl },
  ...against.map(({ name, dir }) => ({ label: ` [${name}]`, bin: join(dir, "apps/nvkectl/bin/run.js") })),
];
const cases: Case[] = [
  { name: "node -e 0", argv: [node, "-e", "0"] },
  ...builds.flatMap(({ label, bin }) => [
    {
      name: `nvkectl get clusters -o json --site (1 site)${label}`,
      argv: [node, bin, "get", "clusters", "-o", "json", "--site", one],
    },
    {
      name: `nvkectl get clusters -o json --all-sites (${siteCount} sites)${label}`,
      argv: [node, bin, "get", "clusters", "-o", "json", "--all-sites"],
    },
    {
      name: `nvkectl get clusters --site (1 site, table)${label}`,
      argv: [node, bin, "get", "clusters", "--site", one],
    },
    {
      name: `nvkectl get clusters --all-sites (${siteCount} sites, table)${label}`,
      argv: [node, bin, "get", "clusters", "--all-sites"],
    },
  ]),
];

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICK_MS = 10;
/** Fields 14–17 of /proc/PID/stat (utime, stime, cutime, cstime) and 4 (ppid), past the command's parentheses. */
function statOf(pid: string): { ppid: string; own: number; reaped: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const at = (n: number) => Number(fields[n - 3] ?? 0);
    return { ppid: fields[1] ?? "", own: at(14) + at(15), reaped: at(16) + at(17) };
  } catch {
    return undefined;
  }
}
/** CPU ms of the bench's live descendants (the emulators and the processes they started). */
function descendantsCpuMs(): number {
  const stats = new Map<string, { ppid: string; own: number }>();
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    const stat = statOf(pid);
    if (stat !== undefined) stats.set(pid, stat);
  }
  const self = String(process.pid);
  const under = (pid: string): boolean => {
    for (let at = stats.get(pid)?.ppid, hops = 0; at !== undefined && hops < 64; at = stats.get(at)?.ppid, hops++) {
      if (at === self) return true;
    }
    return false;
  };
  let ticks = 0;
  for (const [pid, stat] of stats) if (under(pid)) ticks += stat.own;
  return ticks * TICK_MS;
}
/** CPU ms of the bench's reaped children (each timed run, once spawnSync has waited for it). */
const reapedCpuMs = () => (statOf("self")?.reaped ?? 0) * TICK_MS;

function timeOnce(c: Case): { ms: number; cpu: number; servers: number } {
  const cpuBefore = reapedCpuMs();
  const serversBefore = descendantsCpuMs();
  const start = process.hrtime.bigint();
  const result = spawnSync(c.argv[0] ?? "", c.argv.slice(1), { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) fail(`${c.name} exited ${result.status}: ${result.stderr?.toString().slice(0, 500)}`);
  return { ms, cpu: reapedCpuMs() - cpuBefore, servers: descendantsCpuMs() - serversBefore };
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
const cpuSums = new Map<string, { cpu: number; servers: number }>(cases.map((c) => [c.name, { cpu: 0, servers: 0 }]));
for (let round = 0; round < rounds; round++) {
  for (const c of shuffled(cases)) {
    const { ms, cpu, servers } = timeOnce(c);
    samples.get(c.name)?.push(ms);
    const sums = cpuSums.get(c.name);
    if (sums !== undefined) {
      sums.cpu += cpu;
      sums.servers += servers;
    }
  }
}
const loadAfter = loadavg()[0] ?? 0;

const medians = new Map([...samples].map(([name, values]) => [name, median(values)]));
/** Mean CPU ms per run (the ticks are 10 ms: a mean over the rounds, not a median). */
const cpuMeans = new Map(
  [...cpuSums].map(([name, sums]) => [name, { cpu: sums.cpu / rounds, servers: sums.servers / rounds }]),
);
const ratioOf = (many: string, single: string) => (medians.get(many) ?? 0) / (medians.get(single) ?? 1);
const ratios = builds.map(({ label }, n) => ({
  label,
  json: ratioOf(cases[2 + 4 * n]?.name ?? "", cases[1 + 4 * n]?.name ?? ""),
  table: ratioOf(cases[4 + 4 * n]?.name ?? "", cases[3 + 4 * n]?.name ?? ""),
}));
const jsonRatio = ratios[0]?.json ?? 0;
const tableRatio = ratios[0]?.table ?? 0;

if (asJson) {
  process.stdout.write(
    `${JSON.stringify({ rounds, sites: siteCount, clustersPerSite: CLUSTERS, medians: Object.fromEntries(medians), cpu: Object.fromEntries(cpuMeans), jsonRatio, tableRatio, ratios, loadBefore, loadAfter })}\n`,
  );
} else {
  const lines = [
    `${rounds} rounds, ${siteCount} sites of ${CLUSTERS} clusters each, load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}`,
    "",
    "| case | median ms | CLI CPU ms | emulators' CPU ms |",
    "|---|---:|---:|---:|",
    ...[...medians].map(([name, ms]) => {
      const { cpu = 0, servers = 0 } = cpuMeans.get(name) ?? {};
      return `| \`${name}\` | ${ms.toFixed(1)} | ${cpu.toFixed(0)} | ${servers.toFixed(0)} |`;
    }),
    "",
    ...ratios.flatMap(({ label, json, table }) => [
      `--all-sites (${siteCount}) ÷ one site, -o json${label}: ${json.toFixed(2)} (target ≤ 1.5: ${json <= 1.5 ? "met" : "missed"})`,
      `--all-sites (${siteCount}) ÷ one site, table${label}:   ${table.toFixed(2)} (target ≤ 1.5: ${table <= 1.5 ? "met" : "missed"})`,
    ]),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
// The emulators' pipes keep the event loop alive: stop them (the exit handler) and end.
process.exit(0);
