/**
 * `nvkectl upgrade plan` on the sandbox (issue 26: < 2 s): the built CLI, a subprocess per
 * round, planning the upgrade of the sandbox's installed site to its second release (the
 * install record read from the site cluster, the release description read and pinned, each
 * provider's metadata.yaml read from the provider repository and pulled from the release),
 * interleaved with `kubectl get` of the install record alone and `nvkectl --version`, each
 * round in a new random order. It needs a sandbox that is up and installed, with the second
 * release exported, as docs/install.md's "Upgrade on the sandbox" leaves it before its apply
 * (the sandbox is `$NODEKIT_SANDBOX_DIR`, or the default one).
 *
 *   node --conditions=source tooling/bench/upgrade-plan.ts [--rounds N] [--json] [--against NAME=CHECKOUT]...
 *
 * `--against before=/path/to/other/checkout` adds that checkout's built nvkectl's upgrade plan
 * (same inputs, same sandbox) to the same interleaved rounds.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? "") || 15;
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const nvkectl = join(root, "apps/nvkectl/bin/run.js");
// The sandbox's directory, as tooling/sandbox/src/layout.ts's defaultSandboxDir finds it.
const dir = process.env.NODEKIT_SANDBOX_DIR
  ? resolve(process.env.NODEKIT_SANDBOX_DIR)
  : join(process.env.XDG_STATE_HOME || join(process.env.HOME || homedir(), ".local", "state"), "nodekit", "sandbox");

const fail = (message: string): never => {
  process.stderr.write(`upgrade plan bench: ${message}\n`);
  process.exit(1);
};

/** The sandbox's environment, as `eval "$(./run sandbox env)"` sets it (its plain `export K='v'` lines). */
function sandboxEnv(): Record<string, string> {
  const file = join(dir, "env.sh");
  if (!existsSync(file)) fail(`no sandbox is up in ${dir} (./run sandbox up)`);
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const found = /^export ([A-Z_]+)='([^']*)'$/.exec(line);
    if (found?.[1] !== undefined && found[2] !== undefined) env[found[1]] = found[2];
  }
  return env;
}

const sandbox = sandboxEnv();
const site = sandbox.NVKE_SANDBOX_DIR ?? dir;
const release = join(site, "release-next.json");
for (const file of ["sitespec.yaml", "stack.yaml", "release-next.json"]) {
  if (!existsSync(join(site, file))) {
    fail(`${join(site, file)} is missing: run docs/install.md's sandbox steps up to "Upgrade on the sandbox" first`);
  }
}
const env = {
  ...process.env,
  ...sandbox,
  PATH: `${sandbox.PATH ?? ""}:${process.env.PATH ?? ""}`,
  NVKE_NICO_API_KEY: "sandbox-not-a-secret",
  NO_COLOR: "1",
};
const kubeconfig = sandbox.NVKE_SANDBOX_ADMIN_KUBECONFIG ?? "";

const against = args
  .flatMap((arg, i) => (args[i - 1] === "--against" ? [arg] : []))
  .map((spec) => {
    const [name = "", checkout = ""] = spec.split("=");
    return { name, cli: join(resolve(checkout), "apps/nvkectl/bin/run.js") };
  });
const planArgv = (cli: string) => [
  process.execPath,
  cli,
  "upgrade",
  "plan",
  ...["--sitespec", join(site, "sitespec.yaml"), "--stack-config", join(site, "stack.yaml")],
  ...["--kubeconfig", kubeconfig, "--work-dir", join(site, "install"), "--release", release, "--plain-http"],
  ...["-o", "json"],
];

const cases = [
  { name: "nvkectl upgrade plan --release (the sandbox's second release)", argv: planArgv(nvkectl) },
  ...against.map((a) => ({ name: `nvkectl upgrade plan --release [${a.name}]`, argv: planArgv(a.cli) })),
  {
    name: "kubectl get the install record",
    argv: [
      "kubectl",
      ...["--kubeconfig", kubeconfig, "get", "configmap", "nvkectl-install-record", "-n", "kube-system", "-o", "json"],
    ],
  },
  { name: "nvkectl --version", argv: [process.execPath, nvkectl, "--version"] },
];

function timeOnce(argv: string[]): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(argv[0] ?? "", argv.slice(1), { cwd: root, env, stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) fail(`${argv.join(" ")} exited ${result.status}: ${result.stderr.toString().slice(0, 800)}`);
  return ms;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

const loadBefore = loadavg()[0] ?? 0;
// Warm-up: Node's compile cache and the page cache, as a second run has them.
for (const c of cases) for (let i = 0; i < 2; i++) timeOnce(c.argv);
const samples = new Map(cases.map((c) => [c.name, [] as number[]]));
for (let round = 0; round < rounds; round++) {
  const order = [...cases].sort(() => Math.random() - 0.5);
  for (const c of order) samples.get(c.name)?.push(timeOnce(c.argv));
}
const loadAfter = loadavg()[0] ?? 0;
const medians = Object.fromEntries([...samples].map(([name, values]) => [name, median(values)]));
const plan = medians[cases[0]?.name ?? ""] ?? 0;
const result = {
  rounds,
  load: { before: loadBefore, after: loadAfter },
  medians,
  target: { what: "nvkectl upgrade plan on the sandbox < 2000 ms", value: plan, limit: 2000 },
};
if (args.includes("--json")) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
else {
  const width = Math.max(...cases.map((c) => c.name.length));
  const lines = [
    `upgrade plan on the sandbox, median of ${rounds} interleaved rounds (load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)})`,
    ...cases.map((c) => `  ${c.name.padEnd(width)}   ${(medians[c.name] ?? 0).toFixed(1).padStart(9)} ms`),
    `  ${result.target.what}: ${plan.toFixed(0)} — ${plan < 2000 ? "met" : "MISSED"}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
