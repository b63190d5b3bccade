import { join } from "node:path";
import { crdEstablishedWaitArgs } from "@nodekit/kube-calls";
import { binaries } from "@nodekit/testenv";
import { startFluxControllers } from "@nodekit/testenv/flux-controllers";
import { runProcess } from "@nodekit/testenv/supervisor";
import { SandboxError } from "./errors.ts";

// `./run sandbox flux-reconcile DIR`: the tree `nvkectl install --emit flux DIR` wrote, reconciled
// on the sandbox's site cluster by Flux's own source-controller and kustomize-controller (built
// by tooling/flux-testbin), which run as processes of this command, outside the pod-less cluster,
// with the site admin's kubeconfig: Flux's CRDs and namespace are applied, the controllers
// started, DIR/flux applied, and the command waits until every Kustomization is Ready (the
// controller manager's stand-in makes the Deployments available), prints the Flux objects, and
// stops the controllers. The Secrets the tree references are the operator's to create first.

export interface FluxReconcileOptions {
  tree: string;
  kubeconfig: string;
  log: (line: string) => void;
  /** How long every Kustomization may take to become Ready; default 10 minutes. */
  timeoutMs?: number;
}

interface FluxObject {
  kind: string;
  metadata: { name: string };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

export async function fluxReconcile(options: FluxReconcileOptions): Promise<{ seconds: number; table: string }> {
  const kubectl = async (...args: string[]) => {
    const result = await runProcess("kubectl", ["--kubeconfig", options.kubeconfig, ...args], { timeoutMs: 120_000 });
    if (result.exitCode !== 0) {
      throw new SandboxError(`kubectl ${args.join(" ")} failed`, {
        why: result.stderr.trim(),
        next: ["./run sandbox status"],
      });
    }
    return result.stdout;
  };
  const binDir = await binaries("flux", { log: options.log });
  const crds = join(binDir, "crds");
  await kubectl("apply", "--server-side", "--filename", crds);
  for (const args of crdEstablishedWaitArgs(["--filename", crds], "60s")) await kubectl(...args);
  await kubectl("create", "namespace", "flux-system", "--dry-run=client", "--output=yaml").then((yaml) =>
    runProcess("kubectl", ["--kubeconfig", options.kubeconfig, "apply", "--filename=-"], { input: yaml }),
  );
  options.log(`starting source-controller and kustomize-controller from ${binDir}`);
  // A Kustomization whose dependencies are not Ready yet is looked at again after 2 s, not
  // Flux's default 30 s: the tree's items depend on each other in a chain, and the stand-in
  // controller manager makes a Deployment available within a second, so the default left the
  // reconcile waiting most of its time (67 s; 20 s with this, side by side at load 4-9;
  // the result is the same).
  const controllers = await startFluxControllers({ kubeconfig: options.kubeconfig, binDir, requeueDependency: "2s" });
  try {
    const started = performance.now();
    await kubectl("apply", "--server-side", "--kustomize", join(options.tree, "flux"));
    const deadline = Date.now() + (options.timeoutMs ?? 600_000);
    let said = Date.now();
    let items: FluxObject[] = [];
    for (;;) {
      items = JSON.parse(
        await kubectl("get", "kustomizations.kustomize.toolkit.fluxcd.io", "-n", "flux-system", "-o", "json"),
      ).items;
      const waiting = items.filter((i) => i.status?.conditions?.find((c) => c.type === "Ready")?.status !== "True");
      if (items.length > 0 && waiting.length === 0) break;
      const why = () =>
        waiting
          .map((i) => {
            const ready = i.status?.conditions?.find((c) => c.type === "Ready");
            return `${i.metadata.name}: ${ready?.reason ?? "no Ready condition"} ${ready?.message ?? ""}`;
          })
          .join("\n");
      if (Date.now() > deadline) {
        throw new SandboxError(`${waiting.length} of ${items.length} Kustomizations are not Ready`, {
          why: why(),
          next: [`source-controller's log ends:\n${controllers.log("source-controller", 5)}`],
        });
      }
      // What it waits for, every 20 s: a reconcile that takes long says why as it goes.
      if (Date.now() - said >= 20_000) {
        said = Date.now();
        options.log(`waiting for ${waiting.length} of ${items.length} Kustomizations to be Ready:\n${why()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const seconds = (performance.now() - started) / 1000;
    const table = await kubectl(
      "get",
      "ocirepositories.source.toolkit.fluxcd.io,kustomizations.kustomize.toolkit.fluxcd.io",
      "-n",
      "flux-system",
    );
    return { seconds, table };
  } finally {
    await controllers.stop();
  }
}
