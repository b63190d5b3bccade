import { basename } from "node:path";
import { afterAll, expect, inject } from "vitest";
import { type ControlPlaneClient, type ControlPlaneInfo, connectControlPlane } from "./client.ts";
import { type ControlPlane, startControlPlane } from "./control-plane.ts";
import { TestenvError } from "./errors.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Set by tooling/testenv/src/global-setup.ts in the `integration` project. */
    testenv: ControlPlaneInfo;
  }
}

export interface UseControlPlaneOptions {
  /**
   * A control plane of this test file's own instead of the run's shared one: a private
   * kube-apiserver + etcd (fresh CA, ports and data dir, the run's binaries), started on the
   * file's first call and stopped after its last test. For files that create cluster-scoped
   * state (Nodes, CRDs, StorageClasses, fixed-name namespaces, Cluster API): nothing they
   * make reaches another file, and nothing another file made reaches them.
   */
  dedicated?: boolean;
}

/** A test file's own control plane: the shared plane's client, plus its processes and timings. */
export type DedicatedControlPlane = Omit<ControlPlane, "stop">;

function providedInfo(): ControlPlaneInfo {
  const info = inject("testenv");
  if (!info) {
    throw new TestenvError("no control plane was provided to this test file", {
      why: "only the vitest project `integration` (files named *.int.test.ts) starts one, in its global setup",
      next: ["run it with `pnpm test:integration` (or `pnpm exec vitest run --project integration <file>`)"],
    });
  }
  return info;
}

export interface DedicatedHolder {
  /** Starts the control plane on the first call; later calls get the same one. */
  get(): Promise<ControlPlane>;
  /** Stops it if it was started (and waits for a start under way). The next get() starts a new one. */
  stop(): Promise<void>;
}

/** What a file's afterAll stops: one control plane, started lazily by `start`. */
export function dedicatedHolder(start: () => Promise<ControlPlane>): DedicatedHolder {
  let started: Promise<ControlPlane> | undefined;
  return {
    get: () => {
      started ??= start();
      return started;
    },
    async stop() {
      const starting = started;
      started = undefined;
      // A failed start has already stopped what it had started.
      const plane = await starting?.catch(() => undefined);
      await plane?.stop();
    },
  };
}

// Vitest evaluates this module anew for each test file (the integration project isolates
// files), while it collects that file: the afterAll below is then the file's own, and runs
// after its last test. `owner` tells whether that holds for the file asking.
const owner = expect.getState().testPath;
const dedicated = dedicatedHolder(() => {
  const file = basename(owner ?? "this file");
  return startControlPlane({
    binDir: providedInfo().binDir,
    log: (line) => process.stderr.write(`testenv (${file}, dedicated): ${line}\n`),
  });
});
afterAll(() => dedicated.stop());

/**
 * The control plane of this test: server, admin kubeconfig, binDir (kube-apiserver, etcd,
 * helm, clusterctl), kubeconfigFor({ user, groups }), createNamespace(prefix).
 *
 * By default the one the `integration` project's global setup started for the whole run,
 * shared by every file. With `{ dedicated: true }`, one of this file's own (see
 * {@link UseControlPlaneOptions.dedicated}): a few seconds to start, stopped in the file's afterAll.
 */
export function useControlPlane(options: { dedicated: true }): Promise<DedicatedControlPlane>;
export function useControlPlane(options?: UseControlPlaneOptions): Promise<ControlPlaneClient>;
export async function useControlPlane(options: UseControlPlaneOptions = {}): Promise<ControlPlaneClient> {
  if (!options.dedicated) return connectControlPlane(providedInfo());
  const asking = expect.getState().testPath;
  if (owner === undefined || asking !== owner) {
    throw new TestenvError("a dedicated control plane can only be had in a test file that vitest isolates", {
      why: `@nodekit/testenv/vitest was loaded for ${owner ?? "no test file"}, not for ${asking ?? "this one"}: its afterAll, which stops the plane, belongs to that file`,
      next: ["keep `isolate` on in the vitest project (the default), so that each file loads the module anew"],
    });
  }
  return dedicated.get();
}
