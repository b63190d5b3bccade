// `./run demo [--down] [-- <sandbox up flags>]`: the walkthrough. After ./run's set-up, it
// brings up the sandbox and walks the operator flow of docs/first-cluster.md on it, each
// step announced with the exact command (copyable), its output shown; the first failure
// stops it with the step's name and what to look at. A later feature adds its steps to
// operatorFlow() — one `step(title, command)` line each.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { defaultSandboxDir, repoRoot } from "./layout.ts";
import { status } from "./sandbox.ts";
import { runWalkthrough, type Step, step, summary } from "./walkthrough.ts";

const KUBECONFIG_FILE = '"$NVKE_SANDBOX_DIR/capd-demo.kubeconfig"';
const LOOK_AT_SANDBOX =
  "./run sandbox status, the emulator's log $NVKE_SANDBOX_DIR/emulator.log, docs/troubleshooting.md";

/** The operator flow on the sandbox, in the order of docs/first-cluster.md. */
export function operatorFlow(): Step[] {
  return [
    step("Point this shell at the sandbox", `eval "$(./run sandbox env)"`, {
      note: "nvkectl on PATH, and NVKECTL_CONFIG naming the sandbox's own config (yours is not touched)",
    }),
    step(
      "Generate the site spec from the hosts CSV",
      "nvkectl sitespec generate --hosts examples/hosts.csv --site-name my-tier0-site",
      {
        note: "name and ip per host; tpm_ek_thumbprint turns on TPM attestation for a host (docs/sitespec.md)",
      },
    ),
    step(
      "Point nvkectl at the management plane",
      'nvkectl config set-site sandbox --url "$NVKE_SANDBOX_URL" --kubeconfig "$NVKE_SANDBOX_OPERATOR_KUBECONFIG"',
      { note: "the controller API's URL, and the site kubeconfig of an operator with the RBAC of docs/auth.md" },
    ),
    step("List the sites", "nvkectl config get-sites"),
    step("Check the infrastructure providers", "nvkectl get providers", {
      note: "read from the site cluster directly; capd is the provider examples/capd-cluster.yaml names",
      check: ({ stdout }) => (/^capd\s+CONFIGURED\s/m.test(stdout) ? undefined : "capd is not CONFIGURED"),
      lookAt: "docs/providers.md",
    }),
    step("Publish the MachineImage", "nvkectl create machineimage -f examples/machineimage.yaml"),
    step("Publish the ClusterRelease", "nvkectl create clusterrelease -f examples/clusterrelease.yaml"),
    step("Publish the NodePoolRelease", "nvkectl create nodepoolrelease -f examples/nodepoolrelease.yaml"),
    step("Create a tenant cluster", "nvkectl create cluster -f examples/capd-cluster.yaml", {
      note: "a token is minted for the controller with a TokenRequest, on the operator's RBAC",
    }),
    step("Watch it come up", "nvkectl get clusters capd-demo --watch --timeout 2m", {
      note: "Provisioning → Ready; a real kube-apiserver starts for the tenant",
      lookAt: LOOK_AT_SANDBOX,
    }),
    step("Read its ID", "nvkectl get clusters capd-demo"),
    step(
      "Add a node pool",
      [
        "export CLUSTER_ID=$(nvkectl get clusters capd-demo -o yaml | sed -n 's/^id: //p')",
        'sed "s/REPLACE_WITH_CLUSTER_ID/$CLUSTER_ID/" examples/nico-mock-nodepool.yaml | nvkectl create nodepool -f -',
      ].join("\n"),
      { note: "the pool names its cluster by ID" },
    ),
    step("Scale it", "nvkectl scale nodepool workers --cluster capd-demo --replicas 3"),
    step("Watch the nodes join", "nvkectl get nodepools workers --cluster capd-demo", {
      until: { output: /\sReady\s/, describe: "the pool is Ready", timeoutMs: 120_000 },
      lookAt: LOOK_AT_SANDBOX,
    }),
    step("List the cluster's node pools", "nvkectl get nodepools --cluster capd-demo"),
    step(
      "Get the tenant cluster's kubeconfig",
      `nvkectl get kubeconfig capd-demo --output-file ${KUBECONFIG_FILE}\nls -l ${KUBECONFIG_FILE}`,
      {
        note: "read from the site cluster; written with mode 0600, as it holds the cluster's admin credentials",
        check: ({ stdout }) => (/^-rw------- /m.test(stdout) ? undefined : "the kubeconfig file is not mode 0600"),
      },
    ),
    step("Use it: the tenant cluster answers", `kubectl --kubeconfig ${KUBECONFIG_FILE} get namespaces`, {
      lookAt: LOOK_AT_SANDBOX,
    }),
    step(
      "Patch the cluster",
      [
        `nvkectl patch cluster capd-demo --patch '{"labels": {"stage": "demo"}}'`,
        "nvkectl get clusters capd-demo -o yaml | sed -n '/^labels:/,/^[a-z]/p'",
      ].join("\n"),
      { note: "a JSON merge patch: only the fields in it change" },
    ),
    step("Delete the node pool", "nvkectl delete nodepool workers --cluster capd-demo"),
    step("Watch it go", "nvkectl get nodepools workers --cluster capd-demo", {
      note: "its nodes are drained first",
      until: { exitCode: 4, describe: "it is gone", timeoutMs: 120_000 },
    }),
    step("Delete the cluster, and wait until it is gone", "nvkectl delete cluster capd-demo --wait --timeout 2m", {
      lookAt: LOOK_AT_SANDBOX,
    }),
    step("Nothing is left", "nvkectl get clusters"),
  ];
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { down: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    process.stdout.write(
      "usage: ./run demo [--down] [-- <flags for ./run sandbox up>]\n\n" +
        "Brings up the sandbox and walks the operator flow on it (docs/first-cluster.md).\n" +
        "The sandbox stays up afterwards for you to explore, unless --down is given.\n",
    );
    return 0;
  }
  const color = process.stdout.isTTY === true && !process.env.NO_COLOR;
  const io = { out: (text: string) => process.stdout.write(text), color, now: () => performance.now() };
  const upFlags = positionals.map((flag) =>
    /^[\w@%+=:,./-]+$/.test(flag) ? flag : `'${flag.replaceAll("'", `'\\''`)}'`,
  );

  const running = await status({ dir: defaultSandboxDir(), log: () => {} });
  const steps: Step[] = [
    ...(running.running === "none"
      ? []
      : [
          step("Start from a fresh sandbox", "./run sandbox down", {
            note: "a sandbox is up from before; the walkthrough creates its objects from nothing",
          }),
        ]),
    step("Start the sandbox", ["./run sandbox up", ...upFlags].join(" "), {
      note: "a site cluster (kube-apiserver + etcd), the NVKE controller (emulator) with auth on, an nvkectl site; all on 127.0.0.1",
      lookAt: "the lines above, then ./run sandbox status and docs/troubleshooting.md",
      timeoutMs: 30 * 60_000,
    }),
    ...operatorFlow(),
    ...(values.down ? [step("Stop the sandbox", "./run sandbox down")] : []),
  ];

  io.out(
    `nodekit walkthrough: the NVKE operator flow on a local sandbox, ${steps.length} steps (docs/first-cluster.md).\n` +
      "Each command is shown as you would type it in the checkout, then its output.\n",
  );
  const work = await mkdtemp(join(tmpdir(), "nodekit-walkthrough-"));
  // Ctrl-C stops the running step and what it started; the sandbox stays up.
  const interrupt = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => interrupt.abort());
  try {
    const results = await runWalkthrough(steps, {
      cwd: repoRoot,
      env: process.env,
      stateFile: join(work, "exported.sh"),
      io,
      signal: interrupt.signal,
    });
    if (interrupt.signal.aborted) {
      io.out(summary(results, steps.length, color));
      io.out("Interrupted. The sandbox is left as it was: ./run sandbox status, ./run sandbox down\n");
      return 130;
    }
    io.out(summary(results, steps.length, color));
    const ok = results.length === steps.length && results.every((result) => result.ok);
    if (values.down && ok) io.out("The sandbox is down: no process, port or file is left.\n");
    else {
      io.out(
        `The sandbox is still up${ok ? " for you to explore" : " for you to look at"}: eval "$(./run sandbox env)" points a shell at it; ./run sandbox status shows what runs.\n` +
          "Stop it with: ./run sandbox down\n",
      );
    }
    return ok ? 0 : 1;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
