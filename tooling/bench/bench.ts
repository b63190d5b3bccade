/**
 * Start-up benchmark: runs every case in interleaved rounds (so machine noise hits all of
 * them alike), then prints medians and ratios against `kubectl version --client` and
 * `node -e 0` measured in the same run, plus the import cost of each runtime dependency.
 *
 *   ./run pnpm bench [--rounds N] [--json] [--no-release] [--sandbox] [--only PATTERN] [--against NAME=CHECKOUT]...
 *
 * `--sandbox` adds `nvkectl upgrade plan` on the running sandbox (upgrade-plan.ts; it must be
 * up and installed, with its second release exported, as docs/install.md leaves it).
 *
 * `--sea DIR` adds the single executables `pnpm package` wrote to DIR (`nvkectl-linux-x64`,
 * `nr-linux-x64`), run with no node on PATH, to the same rounds (issue 27: ≤ 0.8 × kubectl).
 *
 * `--against before=/path/to/other/checkout` adds that checkout's built nvkectl (and nr) to
 * the same interleaved rounds, so a change is measured before and after in one run.
 *
 * Targets (from the issues) are checked and reported, never asserted in tests.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnServer, startManagementPlane } from "./src/management-plane.ts";
import { median, shuffled } from "./src/rounds.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? "") || 15;
const asJson = args.includes("--json");
/** `--only PATTERN`: only the start-up cases whose names match, without the servers and in-process benches. */
const only = args.includes("--only") ? new RegExp(args[args.indexOf("--only") + 1] ?? "") : undefined;
const withRelease = !args.includes("--no-release") && only === undefined;
const withSandbox = args.includes("--sandbox") && only === undefined;
const against = args
  .flatMap((arg, i) => (args[i - 1] === "--against" ? [arg] : []))
  .map((spec) => {
    const [name = "", dir = ""] = spec.split("=");
    return { name, dir: resolve(dir) };
  });
/** `--sea DIR`: the directory `pnpm package` wrote the single executables to. */
const seaDir = args.includes("--sea") ? resolve(args[args.indexOf("--sea") + 1] ?? ".sea") : undefined;
const node = process.execPath;
const work = mkdtempSync(join(tmpdir(), "nodekit-bench-"));
const env = { PATH: process.env.PATH ?? "", HOME: work, XDG_CONFIG_HOME: join(work, "config"), NO_COLOR: "1" };

interface Case {
  name: string;
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
}

/** oclif's full start instead of the launcher's fast path (what the start-up cost without lever 1). */
const FULL_START = { NVKECTL_FULL_START: "1", NR_FULL_START: "1" };

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
  { name: "nvkectl --version (full start)", argv: [node, nvkectl, "--version"], env: FULL_START },
  { name: "nvkectl get clusters --help", argv: [node, nvkectl, "get", "clusters", "--help"] },
  { name: "nvkectl --help", argv: [node, nvkectl, "--help"] },
  // Help on a terminal (or at another width): oclif's rendering, kept by the first run (the
  // warm-up) and printed from the CLI's cache directory after (packages/cli-kit/src/launch/help-cache.ts).
  { name: "OCLIF_COLUMNS=80 nvkectl --help", argv: [node, nvkectl, "--help"], env: { OCLIF_COLUMNS: "80" } },
  {
    name: "OCLIF_COLUMNS=80 nvkectl get clusters --help",
    argv: [node, nvkectl, "get", "clusters", "--help"],
    env: { OCLIF_COLUMNS: "80" },
  },
  {
    name: "OCLIF_COLUMNS=80 nvkectl --help (full start)",
    argv: [node, nvkectl, "--help"],
    env: { OCLIF_COLUMNS: "80", ...FULL_START },
  },
  { name: "nr --version", argv: [node, nr, "--version"] },
  ...against.flatMap(({ name, dir }) => [
    { name: `nvkectl --version [${name}]`, argv: [node, join(dir, "apps/nvkectl/bin/run.js"), "--version"] },
    { name: `nr --version [${name}]`, argv: [node, join(dir, "apps/nr/bin/run.js"), "--version"] },
  ]),
  // The single executables carry their own Node: run them with a PATH that has none.
  ...(seaDir
    ? [
        { name: "nvkectl --version [single executable]", argv: [join(seaDir, "nvkectl-linux-x64"), "--version"] },
        { name: "nr --version [single executable]", argv: [join(seaDir, "nr-linux-x64"), "--version"] },
      ].map((c) => ({ ...c, env: { PATH: "/usr/bin:/bin" } }))
    : []),
  {
    name: "nvkectl sitespec generate (examples/hosts.csv)",
    argv: [node, nvkectl, "sitespec", "generate", "--hosts", join(root, "examples/hosts.csv")],
  },
  {
    name: "nvkectl sitespec generate (10,000 rows)",
    argv: [node, nvkectl, "sitespec", "generate", "--hosts", hosts10k],
  },
];

// `--version` beside one linked plugin (issue 27 item 4): the test fixtures, linked into data
// directories of their own. One without hooks keeps the fast start; one with an init and a
// prerun hook makes every start oclif's full one (its hooks must run).
function linkedPlugin(fixture: string): Record<string, string> {
  const data = { XDG_DATA_HOME: join(work, `data-${fixture}`) };
  const fixtureDir = join(root, "apps/nvkectl/test/fixtures", fixture);
  const linked = spawnSync(node, [nvkectl, "plugins", "link", "--no-install", fixtureDir], {
    env: { ...env, ...data },
    encoding: "utf8",
  });
  if (linked.status !== 0) throw new Error(`nvkectl plugins link ${fixture}: ${linked.stderr}`);
  return data;
}
cases.push(
  {
    name: "nvkectl --version [a linked plugin, no hooks]",
    argv: [node, nvkectl, "--version"],
    env: linkedPlugin("quiet-plugin"),
  },
  {
    name: "nvkectl --version [a linked plugin with hooks]",
    argv: [node, nvkectl, "--version"],
    env: linkedPlugin("hooks-plugin"),
  },
);

// ---- nvkectl against a management plane: a real kube-apiserver (tooling/testenv) and the
// NVKE controller emulator on it, with auth on so that the token cache is what is measured.
// `get clusters -o json` (20 clusters, token cached) runs in the same interleaved rounds as
// `kubectl get configmaps -o json` against that apiserver; `get clusters -o json` over 10,000
// clusters is measured apart, for wall time and peak RSS. Skipped when kubectl or the
// testenv binaries are missing.

/** Objects each side lists in the small read (kubectl's ConfigMaps are topped up to this many). */
const SMALL = 20;
/** Clusters in the big read. */
const BIG = 50_000;
let listed = SMALL;

interface NvkeBench {
  cases: Case[];
  /** `get clusters -o json` over 10,000 clusters. */
  big: Case;
  note?: string;
  stop(): void;
}

async function startNvkeBench(): Promise<NvkeBench | { note: string }> {
  if (!kubectl) return { note: "kubectl not on PATH" };
  let stop = () => {};
  try {
    const plane = startManagementPlane({ root, work, kubectl, nvkectl, env });
    stop = plane.stop;
    const { kubeconfig, startSite } = plane;
    // A fair comparison: kubectl lists as many objects as nvkectl does (SMALL of each).
    const countConfigMaps = () =>
      (
        JSON.parse(
          spawnSync(kubectl, ["--kubeconfig", kubeconfig, "get", "configmaps", "-A", "-o", "json"], {
            encoding: "utf8",
          }).stdout,
        ) as { items: unknown[] }
      ).items.length;
    const missing = SMALL - countConfigMaps();
    if (missing > 0) {
      const configMaps = Array.from({ length: missing }, (_, n) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { namespace: "nke-controller", name: `bench-${n}` },
        data: { n: String(n) },
      }));
      const more = spawnSync(kubectl, ["--kubeconfig", kubeconfig, "apply", "-f", "-"], {
        input: JSON.stringify({ apiVersion: "v1", kind: "List", items: configMaps }),
        encoding: "utf8",
      });
      if (more.status !== 0) throw new Error(`kubectl apply: ${more.stderr}`);
    }
    listed = countConfigMaps();

    const startEmulator = async (name: string, clusters: number): Promise<string> => {
      const url = await startSite(name, clusters, "bench");
      // Prime the token cache: the cases measure a read with a cached token.
      const prime = spawnSync(node, [nvkectl, "get", "clusters", "-o", "json", "--site", name], {
        env,
        stdio: "ignore",
      });
      if (prime.status !== 0) throw new Error(`nvkectl get clusters --site ${name} exited ${prime.status}`);
      return url;
    };
    const smallUrl = await startEmulator("small", listed);
    await startEmulator("big", BIG);
    const healthz = JSON.stringify(`${smallUrl}/healthz`);
    return {
      cases: [
        {
          name: "nvkectl get clusters -o json (cached token)",
          argv: [node, nvkectl, "get", "clusters", "-o", "json", "--site", "small"],
        },
        {
          name: "nvkectl get clusters -o json (full start)",
          argv: [node, nvkectl, "get", "clusters", "-o", "json", "--site", "small"],
          env: FULL_START,
        },
        ...against.map(({ name, dir }) => ({
          name: `nvkectl get clusters -o json [${name}]`,
          argv: [node, join(dir, "apps/nvkectl/bin/run.js"), "get", "clusters", "-o", "json", "--site", "small"],
        })),
        // What any nvkectl command costs before it does its own work (oclif, the kit, the site config).
        {
          name: "nvkectl config current-site (baseline)",
          argv: [node, nvkectl, "config", "current-site", "--site", "small"],
        },
        // What one HTTP request costs a fresh Node process, through ky (and Node's fetch, which
        // ky needs) and through node:http: the part of get clusters that is the HTTP stack.
        {
          name: "node: one GET with ky",
          argv: [
            node,
            "--input-type=module",
            "-e",
            `const { default: ky } = await import("ky"); await ky(${healthz}).json();`,
          ],
          cwd: join(root, "tooling/bench"),
        },
        {
          name: "node: one GET with node:http (getBuiltinModule)",
          argv: [
            node,
            "--input-type=module",
            "-e",
            `process.getBuiltinModule("node:http").get(${healthz}, (r) => r.resume());`,
          ],
        },
        {
          name: "node: one GET with node:http (import)",
          argv: [
            node,
            "--input-type=module",
            "-e",
            `const http = await import("node:http"); http.get(${healthz}, (r) => r.resume());`,
          ],
        },
        {
          name: "kubectl get configmaps -A -o json",
          argv: [kubectl, "--kubeconfig", kubeconfig, "get", "configmaps", "--all-namespaces", "-o", "json"],
        },
      ],
      big: {
        name: `nvkectl get clusters -o json (${BIG.toLocaleString("en")})`,
        argv: [node, nvkectl, "get", "clusters", "-o", "json", "--site", "big"],
      },
      stop,
    };
  } catch (error) {
    stop();
    return { note: `NVKE cases skipped: ${(error as Error).message}` };
  }
}

const nvke = only === undefined ? await startNvkeBench() : { note: "--only" };
if ("cases" in nvke) cases.push(...nvke.cases);

// ---- nr cluster register --dry-run with the pins from the NodeRings emulator (its default
// dev token): config, state, the pins request, the agent look-up, host facts, tool probes
// and the ten phases' plans — everything a real run decides before it changes anything.
async function startNodeRingsBench(): Promise<{ cases: Case[]; stop(): void } | { note: string }> {
  try {
    const { child, url } = await spawnServer(
      root,
      ["tooling/noderings-emulator/src/main.ts", "--port", "0"],
      "the NodeRings emulator",
    );
    const nrHome = join(work, "nr-home");
    return {
      cases: [
        {
          name: "nr cluster register --dry-run (pins from the emulator)",
          argv: [
            node,
            nr,
            "cluster",
            "register",
            "--name",
            "bench-agent",
            "--api-url",
            url,
            "--skip-operator-install",
            "--dry-run",
          ],
          env: { NR_HOME: nrHome, NR_API_TOKEN: "nr-emulator-dev-token" },
        },
      ],
      stop: () => child.kill("SIGTERM"),
    };
  } catch (error) {
    return { note: `nr register cases skipped: ${(error as Error).message}` };
  }
}
const noderings = only === undefined ? await startNodeRingsBench() : { note: "--only" };
if ("cases" in noderings) cases.push(...noderings.cases);
else process.stderr.write(`bench: ${noderings.note}\n`);

/** Wall time and peak RSS of one run, its stdout written to a file (as a user's redirect would). */
function measureBig(c: Case): { ms: number; peakRssMb: number; items: number } {
  const hook = join(work, "max-rss.mjs");
  const rssFile = join(work, "max-rss.txt");
  const outFile = join(work, "big.json");
  writeFileSync(
    hook,
    `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(rssFile)}, String(process.resourceUsage().maxRSS)));\n`,
  );
  const out = openSync(outFile, "w");
  const start = process.hrtime.bigint();
  const result = spawnSync(c.argv[0] ?? "", c.argv.slice(1), {
    cwd: root,
    env: { ...env, NODE_OPTIONS: `--import=${hook}` },
    stdio: ["ignore", out, "pipe"],
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  closeSync(out);
  if (result.status !== 0)
    throw new Error(`${c.name} exited ${result.status}: ${result.stderr?.toString().slice(0, 500)}`);
  // `-o json` of a list is a kubectl-style List (an array from a checkout before issue 26): the
  // figure counts only if every cluster was printed.
  const printed = JSON.parse(readFileSync(outFile, "utf8")) as unknown[] | { items?: unknown[] };
  const items = Array.isArray(printed) ? printed.length : (printed.items?.length ?? 0);
  if (items !== BIG) throw new Error(`${c.name} printed ${items} items, not ${BIG}`);
  return { ms, peakRssMb: Number(readFileSync(rssFile, "utf8")) / 1024, items };
}

function timeOnce(c: Case): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(c.argv[0] ?? "", c.argv.slice(1), {
    cwd: c.cwd ?? root,
    env: { ...env, ...c.env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0)
    throw new Error(`${c.name} exited ${result.status}: ${result.stderr?.toString().slice(0, 500)}`);
  return ms;
}

// Warm-up: fills Node's compile cache and the OS page cache, as a user's second run would.
const measured = only === undefined ? cases : cases.filter((c) => only.test(c.name) || c.name === "node -e 0");
for (const c of measured) for (let i = 0; i < 2; i++) timeOnce(c);
const samples = new Map<string, number[]>(measured.map((c) => [c.name, []]));
// Each round runs the cases in a new random order, so what a case leaves for the next falls on
// all of them alike. (The first request to an emulator idle for 2 s waits for its auth re-read,
// as it must; in a fixed order the same case paid for it every round.)
for (let round = 0; round < rounds; round++) for (const c of shuffled(measured)) samples.get(c.name)?.push(timeOnce(c));
const medians = new Map([...samples].map(([name, values]) => [name, median(values)]));
if ("cases" in noderings) noderings.stop();

const bigRuns: Array<{ ms: number; peakRssMb: number; items: number }> = [];
// The same read by each --against build, interleaved with this build's runs.
const bigAgainst = new Map<string, number[]>(against.map(({ name }) => [name, []]));
if ("cases" in nvke) {
  try {
    const others = against.map(({ name, dir }) => ({
      name,
      c: { ...nvke.big, argv: [node, join(dir, "apps/nvkectl/bin/run.js"), ...nvke.big.argv.slice(2)] },
    }));
    measureBig(nvke.big); // warm-up
    for (const other of others) measureBig(other.c);
    for (let run = 0; run < Math.max(3, Math.floor(rounds / 5)); run++) {
      bigRuns.push(measureBig(nvke.big));
      for (const other of others) bigAgainst.get(other.name)?.push(measureBig(other.c).ms);
    }
  } finally {
    nvke.stop();
  }
}
const bigMs = bigRuns.length > 0 ? median(bigRuns.map((r) => r.ms)) : undefined;
const bigPeakMb = bigRuns.length > 0 ? Math.max(...bigRuns.map((r) => r.peakRssMb)) : undefined;

// Import cost of each runtime dependency: median of `node -e import(dep)` minus `node -e 0`.
const deps: Array<{ name: string; from: string }> = [
  { name: "@oclif/core", from: "packages/cli-kit" },
  { name: "execa", from: "packages/process" },
  { name: "zod", from: "packages/sitespec" },
  { name: "js-yaml", from: "packages/sitespec" },
  { name: "csv-parse/sync", from: "packages/sitespec" },
  { name: "proper-lockfile", from: "packages/fs-safe" },
  { name: "@kubernetes/client-node", from: "packages/k8s-auth" },
];
const importCosts: Array<{ name: string; ms: number }> = [];
const baseline = medians.get("node -e 0") ?? 0;
for (const dep of only === undefined ? deps : []) {
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
const getRatio = (name: string) => ratio(name, medians.get("kubectl get configmaps -A -o json"));
// Issue 25's figures: `--version` ≤ 0.6×, the help pages ≤ 1.0× `kubectl version --client`.
const targets = [
  {
    what: "nvkectl --version ≤ 0.6× kubectl version --client",
    value: ratio("nvkectl --version", kubectlMs),
    limit: 0.6,
  },
  { what: "nr --version ≤ 0.6× kubectl version --client", value: ratio("nr --version", kubectlMs), limit: 0.6 },
  { what: "nvkectl --help ≤ 1.0× kubectl version --client", value: ratio("nvkectl --help", kubectlMs), limit: 1 },
  {
    what: "nvkectl get clusters --help ≤ 1.0× kubectl version --client",
    value: ratio("nvkectl get clusters --help", kubectlMs),
    limit: 1,
  },
  ...["OCLIF_COLUMNS=80 nvkectl --help", "OCLIF_COLUMNS=80 nvkectl get clusters --help"].map((name) => ({
    what: `${name} (a kept page) ≤ 1.0× kubectl version --client`,
    value: ratio(name, kubectlMs),
    limit: 1,
  })),
  ...(seaDir
    ? ["nvkectl", "nr"].map((cli) => ({
        what: `${cli} --version [single executable] ≤ 0.8× kubectl version --client`,
        value: ratio(`${cli} --version [single executable]`, kubectlMs),
        limit: 0.8,
      }))
    : []),
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
  {
    what: `nvkectl get clusters -o json (cached token, ${listed} clusters) ≤ 1.0× kubectl get configmaps -A -o json (${listed} ConfigMaps)`,
    value: getRatio("nvkectl get clusters -o json (cached token)"),
    limit: 1,
  },
  {
    what: `nvkectl get clusters -o json over ${BIG.toLocaleString("en")} clusters: wall < 2000 ms (${bigRuns[0]?.items ?? 0} items)`,
    value: bigMs,
    limit: 2000,
  },
  {
    what: `nvkectl get clusters -o json over ${BIG.toLocaleString("en")} clusters: peak RSS < 150 MB`,
    value: bigPeakMb,
    limit: 150,
  },
];
targets.push(
  {
    what: "nvkectl --version beside a linked plugin without hooks ≤ 1.5× without it",
    value: ratio("nvkectl --version [a linked plugin, no hooks]", medians.get("nvkectl --version")),
    limit: 1.5,
  },
  {
    what: "nr --version no slower than nvkectl --version (≤ 1.05×)",
    value: ratio("nr --version", medians.get("nvkectl --version")),
    limit: 1.05,
  },
  {
    what: "nr cluster register --dry-run, pins from the emulator, < 500 ms",
    value: medians.get("nr cluster register --dry-run (pins from the emulator)"),
    limit: 500,
  },
);
if (!("cases" in nvke)) process.stderr.write(`bench: ${nvke.note}\n`);

// ---- the phase runner's own overhead per phase (in process): see phase-runner.ts.
const phaseRun = spawnSync(
  node,
  ["--conditions=source", join(root, "tooling/bench/phase-runner.ts"), "--json", "--rounds", String(rounds)],
  { encoding: "utf8" },
);
const phaseRunner: { msPerPhase: number; phases: number } | undefined =
  phaseRun.status === 0 ? JSON.parse(phaseRun.stdout) : undefined;
if (phaseRun.status !== 0) process.stderr.write(`bench: the phase runner bench did not run:\n${phaseRun.stderr}\n`);
targets.push({
  what: `phase runner overhead per phase (${phaseRunner?.phases ?? "?"} no-op phases, one fsynced checkpoint each) < 5 ms`,
  value: phaseRunner?.msPerPhase,
  limit: 5,
});

// ---- release verify (in process, against both loopback registries): see release-verify.ts.
const releaseRun = withRelease
  ? spawnSync(
      node,
      ["--conditions=source", join(root, "tooling/bench/release-verify.ts"), "--json", "--rounds", String(rounds)],
      { encoding: "utf8", maxBuffer: 16 << 20 },
    )
  : undefined;
const releaseResults: Array<{ kind: string; artifacts: number; medianMs: number; cliMedianMs?: number }> =
  releaseRun?.status === 0 ? JSON.parse(releaseRun.stdout).results : [];
if (releaseRun !== undefined && releaseRun.status !== 0) {
  process.stderr.write(`bench: release verify did not run:\n${releaseRun.stderr}\n`);
}
for (const r of releaseResults) {
  targets.push({
    what: `release verify of ${r.artifacts} artifacts, ${r.kind} registry (token auth, warm) < 1000 ms`,
    value: r.medianMs,
    limit: 1000,
  });
  targets.push({
    what: `nvkectl release verify of ${r.artifacts} artifacts (built CLI, start-up included), ${r.kind} registry (token auth, warm) < 1000 ms`,
    value: r.cliMedianMs,
    limit: 1000,
  });
}

// ---- nvkectl upgrade plan on the running sandbox (--sandbox): see upgrade-plan.ts.
const upgradeRun = withSandbox
  ? spawnSync(
      node,
      [
        "--conditions=source",
        join(root, "tooling/bench/upgrade-plan.ts"),
        ...["--json", "--rounds", String(rounds)],
        ...against.flatMap((a) => ["--against", `${a.name}=${a.dir}`]),
      ],
      { encoding: "utf8" },
    )
  : undefined;
const upgradePlan: { medians: Record<string, number>; load: { before: number; after: number } } | undefined =
  upgradeRun?.status === 0 ? JSON.parse(upgradeRun.stdout) : undefined;
if (upgradeRun !== undefined && upgradeRun.status !== 0) {
  process.stderr.write(`bench: upgrade plan on the sandbox did not run:\n${upgradeRun.stderr}\n`);
}
if (withSandbox) {
  targets.push({
    what: "nvkectl upgrade plan on the sandbox (its second release) < 2000 ms",
    value: Object.values(upgradePlan?.medians ?? {})[0],
    limit: 2000,
  });
}

if (asJson) {
  process.stdout.write(
    `${JSON.stringify({ rounds, node: process.version, medians: Object.fromEntries(medians), importCosts, targets, bigRuns, bigAgainst: Object.fromEntries(bigAgainst), releaseResults, phaseRunner, upgradePlan }, null, 2)}\n`,
  );
} else {
  const out: string[] = [`start-up, median of ${rounds} interleaved rounds (node ${process.version})`, ""];
  const width = Math.max(...cases.map((c) => c.name.length));
  out.push(`${"case".padEnd(width)}   median ms   × node -e 0   × kubectl`);
  for (const c of measured) {
    const ms = medians.get(c.name) ?? 0;
    const vsNode = baseline ? (ms / baseline).toFixed(2) : "-";
    const vsKubectl = kubectlMs ? (ms / kubectlMs).toFixed(2) : "-";
    out.push(
      `${c.name.padEnd(width)}   ${ms.toFixed(1).padStart(9)}   ${vsNode.padStart(11)}   ${vsKubectl.padStart(9)}`,
    );
  }
  if (bigMs !== undefined) {
    out.push(
      "",
      `get clusters -o json over ${BIG.toLocaleString("en")} clusters, median of ${bigRuns.length} interleaved runs`,
    );
    out.push(`  this build ${bigMs.toFixed(0).padStart(14)} ms`);
    for (const [name, values] of bigAgainst)
      out.push(
        `  [${name}] ${median(values)
          .toFixed(0)
          .padStart(18 - name.length)} ms`,
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
