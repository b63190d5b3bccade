import type { TestProject } from "vitest/node";
import { startControlPlane } from "./control-plane.ts";

/**
 * Global setup of the vitest project `integration`: one kube-apiserver + etcd per run,
 * whose connection details reach the test files through `inject("testenv")`
 * (see useControlPlane in ./vitest.ts). Fails the run, never skips it, when the binaries
 * cannot be had. The binaries are the runner's (NODEKIT_TESTENV_BIN_DIR, see binaries()).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const plane = await startControlPlane({
    log: (line) => process.stderr.write(`testenv: ${line}\n`),
  });
  project.provide("testenv", plane.info);
  return () => plane.stop();
}
