// `./run demo [--down] [-- <sandbox up flags>]`: the walkthrough. After ./run's set-up, it
// brings up the sandbox and walks the operator flow of docs/first-cluster.md on it (then the
// sandbox's signed release verified and exported, the install's dry run and the install from
// that release applied for real, as docs/install.md runs them, and nr's flow of
// docs/registration.md: its dry run, a real registration of the sandbox's pretend VM, status,
// the live check, a support bundle, and the reset until nothing nr created is left; then the
// nodekit.nr Ansible collection over a fleet of three pretend VMs, docs/fleets.md), each
// step announced with the exact command (copyable), its output shown; the first failure
// stops it with the step's name and what to look at. The steps are in demo-steps.ts.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  fleetFlow,
  fluxFlow,
  installFlow,
  operatorFlow,
  registrationFlow,
  uninstallFlow,
  upgradeFlow,
} from "./demo-steps.ts";
import { defaultSandboxDir, repoRoot } from "./layout.ts";
import { status } from "./sandbox.ts";
import { runWalkthrough, type Step, step, summary } from "./walkthrough.ts";

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
    step("Start the sandbox", ["./run sandbox up --fleet 3", ...upFlags].join(" "), {
      note: "a site cluster (kube-apiserver + etcd), the NVKE controller (emulator) with auth on, an nvkectl site, the NodeRings API (emulator) for nr, a registry holding a signed release, a stand-in for the controller manager, the pretend VMs nr registers (one, and a fleet of three for Ansible); all on 127.0.0.1",
      lookAt: "the lines above, then ./run sandbox status and docs/troubleshooting.md",
      // A cold build of the Kubernetes binaries on a busy machine can take far longer than its 6 minutes.
      timeoutMs: 6 * 3_600_000,
    }),
    ...operatorFlow(),
    ...installFlow(),
    ...upgradeFlow(),
    ...registrationFlow(),
    ...fleetFlow(),
    // Last: nothing after it needs the controller stack.
    ...uninstallFlow(),
    // The same site state again, reached through Flux (docs/gitops.md).
    ...fluxFlow(),
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
