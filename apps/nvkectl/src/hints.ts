import type { Hints } from "@nodekit/cli-kit";

const SET_SITE = "nvkectl config set-site NAME --url URL --kubeconfig FILE";
const CHECK_URL = "check the site's controller URL with `nvkectl config get-sites`";

/**
 * nvkectl's own next steps, per error code, after the library's (which never name nvkectl):
 * what to run in this CLI to fix it.
 */
export const NVKECTL_HINTS: Hints = {
  KUBECONFIG_NOT_FOUND: () => [
    `pass the site cluster's kubeconfig with --kubeconfig (site bootstrap leaves it as <site>.kubeconfig): ${SET_SITE}`,
  ],
  KUBECONFIG_INVALID: () => [`or point the site at another kubeconfig: ${SET_SITE}`],
  KUBE_UNAUTHORIZED: () => [`point the site at the fresh kubeconfig: ${SET_SITE}`],
  NO_ACTIVE_SITE: (error) =>
    error.facts.configured === 0
      ? [`add one with ${SET_SITE} (the first site becomes active)`]
      : ["choose one with nvkectl config use-site NAME", "or name one for a single command with --site NAME"],
  SITE_NOT_FOUND: (error) => [
    ...(error.facts.configured === 0 ? [] : ["list them with nvkectl config get-sites"]),
    `add it with nvkectl config set-site ${String(error.facts.site ?? "NAME")} --url URL --kubeconfig FILE`,
  ],
  CONTROLLER_UNREACHABLE: () => [CHECK_URL],
  CONTROLLER_TIMEOUT: () => [CHECK_URL],
  CONTROLLER_BAD_RESPONSE: () => [CHECK_URL],
  FILE_OWNED_BY_OTHER: (error) =>
    error.facts.forceFlag === undefined
      ? []
      : [`or pass ${String(error.facts.forceFlag)} to replace it with a file of your own`],
  CLUSTER_NOT_FOUND: () => ["list the clusters with `nvkectl get clusters`"],
  NODEPOOL_NOT_FOUND: (error) => [
    `list the cluster's node pools with: nvkectl get nodepools --cluster ${String(error.facts.cluster ?? "<cluster>")}`,
  ],
};
