import type { CommandCall } from "@nodekit/process";

/** The cluster a tool call talks to. */
export interface KubeTarget {
  /** The kubeconfig path; every call names it explicitly (never $KUBECONFIG or ~/.kube/config by accident). */
  kubeconfig: string;
  /** A context other than the kubeconfig's current one. */
  context?: string | undefined;
  /** kubectl's --request-timeout for each request, e.g. "30s". Default 30s. */
  requestTimeout?: string | undefined;
}

export const DEFAULT_REQUEST_TIMEOUT = "30s";

/**
 * `kubectl --kubeconfig K [--context C] --request-timeout=T ARGS…`. kubectl, and the exec
 * plugin a kubeconfig names, get only what every child gets (@nodekit/process
 * INHERITED_ENV: PATH, HOME, locale, proxies, …), never KUBECONFIG: the kubeconfig is named.
 */
export function kubectlCall(
  target: KubeTarget,
  args: readonly string[],
  extra: Partial<CommandCall> = {},
): CommandCall {
  return {
    ...extra,
    command: "kubectl",
    args: [
      "--kubeconfig",
      target.kubeconfig,
      ...(target.context === undefined ? [] : ["--context", target.context]),
      `--request-timeout=${target.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT}`,
      ...args,
    ],
  };
}

/**
 * The environment helm and clusterctl get: a HOME and XDG directories of their own under
 * `dir`, so that a user's repositories, registries, plugins and clusterctl overrides cannot
 * change what is installed, and clusterctl's version check (a call to GitHub) off. Over
 * what every child gets (@nodekit/process INHERITED_ENV): no HELM_* or CLUSTERCTL_* of the
 * user's reaches them (HELM_KUBETOKEN would point helm at another cluster); a call adds the
 * ones it needs (HELM_REGISTRY_CONFIG).
 */
export function isolatedToolEnv(dir: string): Record<string, string> {
  return {
    HOME: dir,
    XDG_CONFIG_HOME: `${dir}/.config`,
    XDG_CACHE_HOME: `${dir}/.cache`,
    XDG_DATA_HOME: `${dir}/.local/share`,
    CLUSTERCTL_DISABLE_VERSIONCHECK: "true",
  };
}

/** `helm ARGS… --kubeconfig K [--kube-context C]`, with the environment given (see isolatedToolEnv). */
export function helmCall(
  target: KubeTarget,
  args: readonly string[],
  env: Record<string, string>,
  extra: Partial<CommandCall> = {},
): CommandCall {
  return {
    ...extra,
    command: "helm",
    args: [
      ...args,
      "--kubeconfig",
      target.kubeconfig,
      ...(target.context === undefined ? [] : ["--kube-context", target.context]),
    ],
    env,
  };
}

/** `clusterctl ARGS… --kubeconfig K [--kubeconfig-context C]`, with the environment given. */
export function clusterctlCall(
  target: KubeTarget,
  args: readonly string[],
  env: Record<string, string>,
  extra: Partial<CommandCall> = {},
): CommandCall {
  return {
    ...extra,
    command: "clusterctl",
    args: [
      ...args,
      "--kubeconfig",
      target.kubeconfig,
      ...(target.context === undefined ? [] : ["--kubeconfig-context", target.context]),
    ],
    env,
  };
}
