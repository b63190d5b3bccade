import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaries } from "./binaries.ts";
import { TestenvError } from "./errors.ts";
import { isolationMarker, loopbackOnly } from "./loopback-only.ts";

// `node tooling/testenv/src/isolate.ts <command> [args...]`: how `pnpm test` and
// `pnpm test:integration` run vitest. First every binary the tests build from Go modules (a
// cold build needs the Go module proxy): the Kubernetes test binaries (tooling/k8s-testbin) and
// the OCI registries (tooling/registry-testbin); cloud-init from Debian's package
// (tooling/cloud-init-testbin); ansible-core from PyPI (tooling/ansible-testbin); and Flux's
// source-controller and kustomize-controller with their CRDs, built from their Go modules
// (tooling/flux-testbin); Argo CD's Application CRD from its Go module (tooling/argocd-crds). Then the command, in a network
// namespace with only loopback up where the platform allows one; elsewhere as it is, and one
// line on stderr says so.

const usage = "usage: node tooling/testenv/src/isolate.ts [--] <command> [args...]";
const log = (line: string) => process.stderr.write(`testenv: ${line}\n`);

async function main(argv: string[]): Promise<number> {
  const command = argv[0] === "--" ? argv.slice(1) : argv;
  if (command.length === 0) {
    process.stderr.write(`${usage}\n`);
    return 2;
  }
  // The run's Go programs (kubectl, helm and clusterctl, a few thousand calls of ≈ 40 ms each,
  // and the registries and controllers) collect garbage at 5× their live heap rather than 2×,
  // unless the environment says otherwise: a kubectl call's start-up allocations set off
  // collections that were ≈ 30 % of its CPU (`kubectl version --client`, 30 calls: 1.29 s of
  // CPU with Go's default, 0.91 s with GOGC=400), and none of these runs long enough to grow.
  // They also run on one OS thread at a time (GOMAXPROCS=1), unless the environment says
  // otherwise: a run keeps ten to twenty processes runnable per core, and a Go program with a
  // thread per core spins looking for work and runs its collector beside itself. A control
  // plane given Cluster API's CRDs and then their deletion cost kube-apiserver 5.5–5.7 CPU-s
  // instead of 6.5–8.8, etcd's start 0.09 instead of 0.14, an idle kube-apiserver 25 % less.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GOGC: process.env.GOGC ?? "400",
    GOMAXPROCS: process.env.GOMAXPROCS ?? "1",
  };
  // Every test that needs them takes them from here (binaries() reads these variables) and
  // runs no ensure.sh of its own: in the network namespace a cold build could not fetch.
  // The six sets at once: each ensure.sh checks its cache (hashes, versions) in a process of
  // its own, one after another they left a core idle for seconds before the first test.
  const sets = await Promise.all(
    (["kubernetes", "registry", "cloud-init", "ansible", "flux", "argocd"] as const).map((set) =>
      binaries(set, { env, log }),
    ),
  );
  [
    env.NODEKIT_TESTENV_BIN_DIR,
    env.NODEKIT_REGISTRY_BIN_DIR,
    env.NODEKIT_CLOUD_INIT_BIN_DIR,
    env.NODEKIT_ANSIBLE_BIN_DIR,
    env.NODEKIT_FLUX_BIN_DIR,
    env.NODEKIT_ARGOCD_CRDS_DIR,
  ] = sets;

  // kubectl's discovery and HTTP caches for the run, not the user's ~/.kube/cache (unless the
  // environment names a KUBECACHEDIR): the tests' clusters listen on ports that change from
  // run to run, and each port left an entry there, ≈ 250 directories and 667 MB on one machine
  // after two days of runs. The directory goes when the run ends.
  const kubeCache = process.env.KUBECACHEDIR ? undefined : mkdtempSync(join(tmpdir(), "nodekit-kube-cache-"));
  if (kubeCache !== undefined) env.KUBECACHEDIR = kubeCache;
  const removeKubeCache = () => {
    if (kubeCache !== undefined) rmSync(kubeCache, { recursive: true, force: true });
  };

  const isolation = await loopbackOnly();
  let argvToRun = command;
  if (isolation.isolated) {
    env[isolationMarker.name] = isolationMarker.value;
    argvToRun = [...isolation.prefix, ...command];
  } else {
    log(`tests run with this machine's network: no network namespace here (${isolation.reason})`);
  }
  const [file = "", ...args] = argvToRun;
  const child = spawn(file, args, { stdio: "inherit", env });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const signal of signals) process.on(signal, forward);
  return new Promise((resolvePromise) => {
    child.on("error", (error) => {
      removeKubeCache();
      log(`error: could not run ${command[0]}: ${error.message}`);
      resolvePromise(127);
    });
    child.on("exit", (code, signal) => {
      for (const s of signals) process.off(s, forward);
      removeKubeCache();
      if (signal) {
        process.kill(process.pid, signal);
        return;
      }
      resolvePromise(code ?? 1);
    });
  });
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof TestenvError) {
    log(`error: ${error.message}`); // what, why and next, one per line
  } else {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }
  process.exitCode = 1;
}
