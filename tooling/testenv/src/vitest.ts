import { inject } from "vitest";
import { type ControlPlaneClient, type ControlPlaneInfo, connectControlPlane } from "./client.ts";
import { TestenvError } from "./errors.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Set by tooling/testenv/src/global-setup.ts in the `integration` project. */
    testenv: ControlPlaneInfo;
  }
}

/**
 * The control plane that the `integration` project's global setup started for this run:
 * server, admin kubeconfig, kubeconfigFor({ user, groups }), createNamespace(prefix).
 */
export async function useControlPlane(): Promise<ControlPlaneClient> {
  const info = inject("testenv");
  if (!info) {
    throw new TestenvError("no control plane was provided to this test file", {
      why: "only the vitest project `integration` (files named *.int.test.ts) starts one, in its global setup",
      next: ["run it with `pnpm test:integration` (or `pnpm exec vitest run --project integration <file>`)"],
    });
  }
  return connectControlPlane(info);
}
