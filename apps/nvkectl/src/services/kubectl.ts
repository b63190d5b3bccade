import { resolve } from "node:path";
import {
  assertKubeconfig,
  type KubeAnswer,
  type KubeTarget,
  kubeconfigFiles,
  kubectlCall,
  kubeTarget,
  loadKubeconfig,
  runKube,
} from "@nodekit/kube";
import type { ProcessRunner } from "@nodekit/process";
import { kubectlRequestTimeout } from "./time.ts";

/**
 * How commands that read the site cluster directly (get providers, get kubeconfig, version)
 * reach it: the site's kubeconfig, or with no site configured the one kubectl would use
 * (KUBECONFIG's files, `kubeconfigEnv` when it lists several; ~/.kube/config), and `--context`.
 */
export interface SiteCluster extends KubeTarget {
  /** What the kubeconfig is, in messages: "the site's kubeconfig" (the default), or the one KUBECONFIG names. */
  what?: string;
  runner: ProcessRunner;
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
  for (const file of kubeconfigFiles(cluster)) await assertKubeconfig(file, cluster.what ?? "the site's kubeconfig");
  return runKube(cluster.runner, kubectlCall(cluster, args), {
    doing,
    kubeconfig: cluster.kubeconfig,
    cluster: "the site cluster",
  });
}

/**
 * That the cluster's kubeconfig defines its `--context`, before a tool is run with it:
 * KUBE_CONTEXT_NOT_FOUND (a usage error, exit 2) naming the contexts there are and the files
 * read, the same error whether the command then reads the cluster itself or runs kubectl,
 * helm or clusterctl.
 */
export async function assertContext(target: KubeTarget): Promise<void> {
  if (target.context === undefined) return;
  await loadKubeconfig(kubeconfigFiles(target), { context: target.context });
}

/** The site cluster as install, uninstall and upgrade are given it (their inputs). */
export interface SiteClusterInputs {
  /** The kubeconfig: a path, or with `kubeconfigEnv` KUBECONFIG's list of several (see @nodekit/kube kubeTarget). */
  kubeconfig: string;
  kubeconfigEnv?: boolean | undefined;
  /** `--context`: kubectl's --context, helm's --kube-context, clusterctl's --kubeconfig-context. */
  context?: string | undefined;
  cwd?: string;
  /** --request-timeout, in ms: each kubectl request's. */
  requestTimeoutMs?: number | undefined;
}

/** The target kubectl, helm and clusterctl are run with: each file resolved against `cwd` and checked. */
export async function siteToolTarget(inputs: SiteClusterInputs): Promise<KubeTarget> {
  const cwd = inputs.cwd ?? process.cwd();
  const files = kubeconfigFiles(inputs).map((file) => resolve(cwd, file));
  for (const file of files) await assertKubeconfig(file, "the site cluster's kubeconfig");
  const requestTimeout =
    inputs.requestTimeoutMs === undefined ? undefined : kubectlRequestTimeout(inputs.requestTimeoutMs);
  return kubeTarget(files, {
    ...(inputs.context === undefined ? {} : { context: inputs.context }),
    ...(requestTimeout === undefined ? {} : { requestTimeout }),
  });
}
