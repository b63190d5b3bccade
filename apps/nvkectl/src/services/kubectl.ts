import { assertKubeconfig, type KubeAnswer, kubectlCall, runKube } from "@nodekit/kube";
import type { ProcessRunner } from "@nodekit/process";

/** How commands that read the site cluster directly (get providers, get kubeconfig) reach it. */
export interface SiteCluster {
  /** The site cluster's kubeconfig (the site's `--kubeconfig`). */
  kubeconfig: string;
  /** What the kubeconfig is, in messages: "the site's kubeconfig" (the default), or the one KUBECONFIG names. */
  what?: string;
  runner: ProcessRunner;
  /** The kubeconfig's context to use instead of its current-context (`--context`). */
  context?: string | undefined;
  /** Per request; kubectl's --request-timeout. Default 30s. */
  requestTimeout?: string;
  /** The same, in ms, for reads through @kubernetes/client-node. Default 30 s. */
  requestTimeoutMs?: number;
}

/**
 * `kubectl --kubeconfig <site> <args>` through @nodekit/kube: a missing object (or resource
 * type) is an answer for the caller; every other failure is the user error of its class.
 */
export async function kubectl(cluster: SiteCluster, args: readonly string[], doing: string): Promise<KubeAnswer> {
  await assertKubeconfig(cluster.kubeconfig, cluster.what ?? "the site's kubeconfig");
  const call = kubectlCall(
    { kubeconfig: cluster.kubeconfig, context: cluster.context, requestTimeout: cluster.requestTimeout },
    args,
  );
  return runKube(cluster.runner, call, { doing, kubeconfig: cluster.kubeconfig, cluster: "the site cluster" });
}
