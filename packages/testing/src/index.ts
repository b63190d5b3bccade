import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  binaries,
  type ControlPlane,
  ensureScript,
  type StartControlPlaneOptions,
  startControlPlane as startTestenvControlPlane,
} from "@nodekit/testenv";

// What plugin authors and platform teams test against, without a cluster of their own: a real
// kube-apiserver and etcd on 127.0.0.1 (the way envtest serves controller-runtime users), the
// NVKE controller emulator on top of it (TokenReview auth, kubeconfig Secrets, asynchronous
// provisioning), and the NodeRings emulator. They are the ones this repository's own tests use.

export {
  type ChaosMode as NodeRingsChaosMode,
  DEV_TOKEN as NODERINGS_DEV_TOKEN,
  type NodeRingsEmulatorOptions,
  type RunningNodeRingsEmulator,
  startNodeRingsEmulator,
  type TokenSpec as NodeRingsTokenSpec,
} from "@nodekit/noderings-emulator";
export {
  type ChaosMode as NvkeChaosMode,
  DEFAULT_TIMING as NVKE_DEFAULT_TIMING,
  type EmulatorOptions as NvkeEmulatorOptions,
  type EmulatorState as NvkeEmulatorState,
  type RunningEmulator as RunningNvkeEmulator,
  type SeedOptions as NvkeSeedOptions,
  startEmulator as startNvkeEmulator,
  type Timing as NvkeTiming,
} from "@nodekit/nvke-emulator";
export type { ControlPlane, StartControlPlaneOptions } from "@nodekit/testenv";

/** The script that builds kube-apiserver and etcd from pinned Go modules, shipped beside dist/ (the repository's before a build). */
function shippedEnsureScript(): string {
  const shipped = fileURLToPath(new URL("../k8s-testbin/ensure.sh", import.meta.url));
  return existsSync(shipped) ? shipped : ensureScript;
}

function holdsControlPlane(dir: string): boolean {
  try {
    for (const name of ["kube-apiserver", "etcd"]) accessSync(join(dir, name), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The directory holding kube-apiserver and etcd, found as this repository's tests find it:
 * `NODEKIT_TESTENV_BIN_DIR`; else envtest's `KUBEBUILDER_ASSETS` (`setup-envtest use -p path`)
 * when it holds both; else the shipped `k8s-testbin/ensure.sh`, which reuses a build in
 * `~/.cache/nodekit/k8s-testbin` or builds one with Go (20–40 minutes, once). The package
 * carries no binaries.
 */
export async function controlPlaneBinaries(
  options: Pick<StartControlPlaneOptions, "env" | "log"> = {},
): Promise<string> {
  const env = options.env ?? process.env;
  const assets = env.KUBEBUILDER_ASSETS;
  if (!env.NODEKIT_TESTENV_BIN_DIR && assets && holdsControlPlane(assets)) return assets;
  return binaries("kubernetes", {
    env,
    script: shippedEnsureScript(),
    ...(options.log === undefined ? {} : { log: options.log }),
  });
}

/**
 * Starts a real kube-apiserver and etcd on 127.0.0.1 with certificates of their own; resolves
 * once `/readyz` answers. `adminKubeconfigPath` is a kubeconfig for it; `stop()` stops both and
 * removes their data. Binaries as `controlPlaneBinaries` finds them, unless `binDir` is given.
 */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const binDir = options.binDir ?? (await controlPlaneBinaries(options));
  return startTestenvControlPlane({ ...options, binDir });
}
