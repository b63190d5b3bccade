// `./run sandbox up|status|down|env` (also `pnpm sandbox …`): a local NVKE site on loopback.
// Results on stdout, progress on stderr. Runs from source: node --conditions=source.
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { runCli } from "@nodekit/testenv/cli-main";
import { SandboxError } from "./errors.ts";
import { defaultSandboxDir, sandboxLayout } from "./layout.ts";
import { setPlatformPins } from "./platform-pins.ts";
import {
  type ControllerAuth,
  down,
  kubeconfigFor,
  type SandboxInfo,
  type SandboxStatus,
  serve,
  status,
  up,
} from "./sandbox.ts";

const cli = process.env.NODEKIT_SANDBOX_CLI || "pnpm sandbox";

const usage = `usage: ${cli} <command>

  up [--bin-dir DIR] [--provision-ms N] [--delete-ms N] [--node-ms N] [--fleet N]
                 start the sandbox (or find it started): a site cluster (kube-apiserver
                 + etcd), the NVKE controller emulator with auth on, an nvkectl site,
                 the NodeRings API emulator for nr (a token and an NR_HOME of its own),
                 a registry (Basic auth) holding a signed release, a stand-in for
                 the controller manager so an install finishes, and an agent cluster
                 (a pretend VM, with stand-ins for k3s and liqoctl) for nr cluster register;
                 --fleet N: N more pretend VMs, and an Ansible inventory of them
                 (NR_SANDBOX_FLEET_INVENTORY, docs/fleets.md)
  status [-o json]
                 what runs (exit 0: everything; 1: part of it; 3: nothing)
  env            the environment lines that point a shell at it: eval "$(${cli} env)"
  kubeconfig --user NAME [--group G]...
                 a kubeconfig path for any identity on the site cluster (no RBAC of its
                 own: grant it what you want to try)
  pins next|served
                 the platform's new pins: NodeRings serves k3s and Calico one step on
                 (for nr cluster upgrade --plan), or again what it served before
  flux-reconcile DIR [--kubeconfig FILE]
                 reconcile the tree \`nvkectl install --emit flux DIR\` wrote with Flux's own
                 source-controller and kustomize-controller (tooling/flux-testbin), run
                 against the site cluster (default: its admin kubeconfig) until every
                 Kustomization is Ready; prints the Flux objects, then stops them
  down           stop it; no process, port or file is left

Everything listens on 127.0.0.1 only. NODEKIT_SANDBOX_TIMING="provision-ms=N,delete-ms=N,node-ms=N"
sets up's flags from the environment. State: $NODEKIT_SANDBOX_DIR, else
\${XDG_STATE_HOME:-~/.local/state}/nodekit/sandbox. See docs/end-to-end.md.`;

const log = (line: string) => process.stderr.write(`sandbox: ${line}\n`);

const shellQuote = (value: string) => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

function describeUp(info: SandboxInfo, seconds: number): string {
  const rows = [
    ["site cluster", info.site.server, "kube-apiserver + etcd"],
    ["NVKE controller", info.controller.url, `the emulator; auth on, audience "${info.controller.audience}"`],
    ["admin kubeconfig", info.site.adminKubeconfig, "system:masters, for looking around"],
    [
      "operator kubeconfig",
      info.operator.kubeconfig,
      `user "${info.operator.user}": only the RBAC docs/auth.md grants`,
    ],
    ["nvkectl site", `"${info.nvkectl.site}" in ${info.nvkectl.config}`, "kept apart from your own nvkectl config"],
    ["NodeRings API", info.noderings.url, `the emulator, for nr; its token is in ${info.noderings.tokenFile}`],
    ["nr home", info.nr.home, "NR_HOME: nr's state and tools, kept apart from your ~/.nr"],
    [
      "agent cluster",
      info.agent.kubeconfig,
      "the pretend VM nr registers: a kube-apiserver of its own, stand-ins for k3s's installer and liqoctl",
    ],
    ...(info.fleet === undefined
      ? []
      : [
          [
            "fleet",
            info.fleet.inventory,
            `the Ansible inventory of ${info.fleet.hosts.length} more pretend VMs (${info.fleet.hosts.join(", ")}), each as the agent's`,
          ],
        ]),
    [
      "registry",
      info.registry.url,
      `the distribution registry, Basic auth: user "${info.registry.user}", credentials in ${info.registry.dockerConfig}`,
    ],
    ["release", info.release.tagReference, `signed; trusted by ${info.release.policy}`],
    ["", info.release.pinnedReference, `from deploy/nico; ${info.release.note}`],
    ["next release", info.release.next.tagReference, "one chart and one provider newer: what nvkectl upgrade moves to"],
    ["controller manager", "a stand-in", "Deployments and Jobs are marked ready, so an install finishes; no pod runs"],
  ];
  const width = Math.max(...rows.map(([name = ""]) => name.length));
  return [
    `The NVKE sandbox is up (${seconds.toFixed(1)} s). Everything listens on 127.0.0.1; all of it is in ${info.dir}.`,
    "",
    ...rows.map(([name = "", value, note]) => `  ${name.padEnd(width)}  ${value}   (${note})`),
    "",
    "Point this shell at it (nvkectl on PATH, and the sandbox's config instead of yours):",
    "",
    `  export NVKECTL_CONFIG=${shellQuote(info.nvkectl.config)} PATH=${shellQuote(info.nvkectl.binDir)}:$PATH`,
    "",
    `or: eval "$(${cli} env)", which also sets NR_API_URL, NR_API_TOKEN and NR_HOME for nr (and the agent cluster's stand-ins), DOCKER_CONFIG for the`,
    "registry and NVKE_SANDBOX_RELEASE / NVKE_SANDBOX_POLICY for the release. Then, for example:",
    "",
    "  nvkectl get providers",
    '  nvkectl release verify "$NVKE_SANDBOX_RELEASE" --policy "$NVKE_SANDBOX_POLICY" --plain-http',
    "  nvkectl create cluster -f examples/capd-cluster.yaml",
    "  nr cluster register --name demo-agent --dry-run",
    "",
    `The whole operator flow, step by step: ./run demo (docs/first-cluster.md). What runs: ${cli} status.`,
    `Stop it (no process, port or file is left): ${cli} down`,
    "",
  ].join("\n");
}

function describeAuth(auth: ControllerAuth): string {
  switch (auth.mode) {
    case "on":
      return `auth on, audience "${auth.audience}" (from ${auth.source})`;
    case "off":
      return "auth off: no auth ConfigMap in nke-controller or cloud-workflow-engine";
    default:
      return `auth ${auth.mode}: ${auth.message}`;
  }
}

function describeStatus(s: SandboxStatus): string {
  if (s.running === "none") return `not running (${s.dir})\n`;
  const rows: Array<[string, string]> = [];
  if (s.site) {
    rows.push(
      ["site cluster", `${s.site.server}   since ${s.site.since}`],
      ["", `supervisor pid ${s.site.pid}, etcd ${s.site.etcd}, kube-apiserver ${s.site.kubeApiserver}`],
      ["admin kubeconfig", s.site.adminKubeconfig],
    );
  }
  if (s.controller) {
    rows.push(
      ["NVKE controller", `${s.controller.url}   since ${s.controller.since}`],
      ["", `emulator pid ${s.controller.pid}; ${describeAuth(s.controller.auth)}`],
    );
  }
  if (s.noderings) {
    rows.push(
      ["NodeRings API", `${s.noderings.url}   since ${s.noderings.since}`],
      ["", `emulator pid ${s.noderings.pid}; token in ${s.noderings.tokenFile}; NR_HOME ${s.noderings.nrHome}`],
    );
  }
  if (s.registry) {
    rows.push(
      ["registry", s.registry.url],
      [
        "",
        `supervisor pid ${s.registry.pid}; Basic auth, user "${s.registry.user}"; credentials in ${s.registry.dockerConfig}`,
      ],
    );
  }
  if (s.release) {
    rows.push(
      ["release", `${s.release.tagReference}   (${s.release.pinnedReference})`],
      ["", `signed by the sandbox's key; policy ${s.release.policy}`],
      ["", `${s.release.note}`],
      ...(s.release.next === undefined ? [] : [["next release", s.release.next.tagReference] as [string, string]]),
    );
  }
  if (s.controllerStandIn) {
    rows.push([
      "controller manager",
      `stand-in, supervisor pid ${s.controllerStandIn.pid}: ${s.controllerStandIn.note}`,
    ]);
  }
  if (s.agent) {
    rows.push(
      ["agent cluster", `${s.agent.server}   pids ${s.agent.pids.join(", ")}`],
      ["", `the pretend VM nr registers; its kubeconfig ${s.agent.kubeconfig}`],
    );
  }
  if (s.operator) rows.push(["operator kubeconfig", `${s.operator.kubeconfig}   (user "${s.operator.user}")`]);
  if (s.nvkectl) rows.push(["nvkectl site", `"${s.nvkectl.site}" in ${s.nvkectl.config}`]);
  rows.push(["tenant API servers", s.tenants.length === 0 ? "none (one runs for each Ready tenant cluster)" : ""]);
  for (const tenant of s.tenants)
    rows.push([`  ${tenant.cluster}`, `${tenant.server}   pids ${tenant.pids.join(", ")}`]);
  const width = Math.max(...rows.map(([name]) => name.length));
  return [
    s.running === "all" ? `running, in ${s.dir}` : `partly running, in ${s.dir}`,
    ...s.problems.map((problem) => `missing: ${problem}`),
    ...rows.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`.trimEnd()),
    ...(s.running === "partly" ? [`next: ${cli} up (repairs it), or ${cli} down`] : []),
    "",
  ].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "bin-dir": { type: "string" },
      "provision-ms": { type: "string" },
      "delete-ms": { type: "string" },
      "node-ms": { type: "string" },
      fleet: { type: "string" },
      output: { type: "string", short: "o" },
      user: { type: "string" },
      group: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
      // serve (started by up)
      dir: { type: "string" },
      kubeconfig: { type: "string" },
      "site-server": { type: "string" },
      "site-pid": { type: "string" },
      "registry-bin-dir": { type: "string" },
    },
  });
  const [command, ...rest] = positionals;
  const pinsArg = command === "pins" && rest.length === 1 ? rest[0] : undefined;
  if (
    values.help ||
    command === undefined ||
    command === "help" ||
    (rest.length > 0 && pinsArg === undefined && command !== "flux-reconcile") ||
    (command === "flux-reconcile" && rest.length !== 1) ||
    (command === "pins" && pinsArg !== "next" && pinsArg !== "served")
  ) {
    process.stderr.write(`${usage}\n`);
    return values.help || command === "help" ? 0 : 2;
  }
  const timing: Record<string, number> = {};
  // NODEKIT_SANDBOX_TIMING="provision-ms=500,delete-ms=300,node-ms=100": the same as the flags,
  // for tests and scripts that start the sandbox through a guide's own `./run sandbox up`.
  const fromEnv = Object.fromEntries(
    (process.env.NODEKIT_SANDBOX_TIMING ?? "")
      .split(",")
      .filter(Boolean)
      .map((pair) => pair.split("=", 2) as [string, string]),
  );
  for (const [flag, key] of [
    ["provision-ms", "provisionMs"],
    ["delete-ms", "deleteMs"],
    ["node-ms", "nodeMs"],
  ] as const) {
    const text = values[flag] ?? (command === "up" ? fromEnv[flag] : undefined);
    if (text === undefined) continue;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) {
      process.stderr.write(`sandbox: --${flag} must be a whole number of milliseconds; got "${text}"\n${usage}\n`);
      return 2;
    }
    timing[key] = n;
  }
  if (values.output !== undefined && values.output !== "json") {
    process.stderr.write(`sandbox: -o takes json; got "${values.output}"\n`);
    return 2;
  }
  const fleet = values.fleet === undefined ? 0 : Number(values.fleet);
  if (!Number.isInteger(fleet) || fleet < 0 || fleet > 20) {
    process.stderr.write(`sandbox: --fleet takes how many pretend VMs, 0 to 20; got "${values.fleet}"\n${usage}\n`);
    return 2;
  }
  const dir = values.dir ?? defaultSandboxDir();
  // The sandbox's own kubectl calls keep their caches in the sandbox, which down removes, as its
  // nvkectl wrapper's do: its clusters' ports change with every up, and each would leave an
  // entry in ~/.kube/cache.
  process.env.KUBECACHEDIR = sandboxLayout(dir).kubeCacheDir;
  switch (command) {
    case "up": {
      const started = performance.now();
      const info = await up({
        dir,
        log,
        timing,
        fleet,
        ...(values["bin-dir"] === undefined ? {} : { binDir: values["bin-dir"] }),
      });
      process.stdout.write(describeUp(info, (performance.now() - started) / 1000));
      return 0;
    }
    case "status": {
      const s = await status({ dir, log });
      process.stdout.write(values.output === "json" ? `${JSON.stringify(s, null, 2)}\n` : describeStatus(s));
      return s.running === "all" ? 0 : s.running === "partly" ? 1 : 3;
    }
    case "env": {
      const s = await status({ dir, log, auth: false });
      const info = s.nvkectl && s.operator && s.site && s.controller;
      if (s.running !== "all" || !info) {
        process.stderr.write(`sandbox: not running; start it with: ${cli} up\n`);
        return 3;
      }
      process.stdout.write(await readFile(s.nvkectl?.envFile ?? "", "utf8"));
      return 0;
    }
    case "kubeconfig": {
      if (!values.user) {
        process.stderr.write(`sandbox: kubeconfig needs --user NAME\n${usage}\n`);
        return 2;
      }
      process.stdout.write(`${await kubeconfigFor({ dir, log, user: values.user, groups: values.group ?? [] })}\n`);
      return 0;
    }
    case "pins": {
      const s = await status({ dir, log });
      if (s.running !== "all" || !s.noderings) {
        process.stderr.write(`sandbox: not running; start it with: ${cli} up\n`);
        return 3;
      }
      const name = await setPlatformPins({ dir, url: s.noderings.url, which: pinsArg === "next" ? "next" : "served" });
      log(`NodeRings serves the pin set ${name}`);
      return 0;
    }
    case "flux-reconcile": {
      const s = await status({ dir, log });
      const kubeconfig = values.kubeconfig ?? s.site?.adminKubeconfig;
      if (kubeconfig === undefined) {
        process.stderr.write(`sandbox: not running; start it with: ${cli} up (or name --kubeconfig)\n`);
        return 3;
      }
      const { fluxReconcile } = await import("./flux.ts");
      const result = await fluxReconcile({ tree: rest[0] ?? "", kubeconfig, log });
      process.stdout.write(result.table);
      log(`every Kustomization Ready ${result.seconds.toFixed(1)} s after the tree was applied`);
      return 0;
    }
    case "down": {
      const result = await down({ dir, log });
      log(result.wasRunning ? `stopped; removed ${dir}` : `was not running; removed ${dir}`);
      return 0;
    }
    case "serve": {
      const { kubeconfig } = values;
      const siteServer = values["site-server"];
      const sitePid = Number(values["site-pid"]);
      const binDir = values["bin-dir"];
      const registryBinDir = values["registry-bin-dir"];
      if (!kubeconfig || !siteServer || !(sitePid > 0) || !binDir || !registryBinDir) {
        process.stderr.write(
          "sandbox serve is started by `up`: it needs --kubeconfig, --site-server, --site-pid, --bin-dir, --registry-bin-dir\n",
        );
        return 2;
      }
      const stamp = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
      await serve({ dir, kubeconfig, siteServer, sitePid, binDir, registryBinDir, timing, fleet, log: stamp });
      return 0;
    }
    default:
      process.stderr.write(`sandbox: unknown command ${command}\n${usage}\n`);
      return 2;
  }
}

await runCli({
  name: "sandbox",
  usage,
  main: () => main(process.argv.slice(2)),
  describeKnown: (error) => (error instanceof SandboxError ? error.describe() : undefined),
});
