import { delimiter } from "node:path";
import type { CommandCall } from "@nodekit/process";

/** The cluster a tool call talks to. */
export interface KubeTarget {
  /**
   * The kubeconfig path; every call names it explicitly (never $KUBECONFIG or ~/.kube/config by
   * accident). With `kubeconfigEnv`, KUBECONFIG's list of several files, as KUBECONFIG holds it.
   */
  kubeconfig: string;
  /**
   * Name the kubeconfig to the tool as KUBECONFIG in its environment instead of --kubeconfig:
   * for a list of several files, which kubectl, helm and clusterctl merge only from the
   * variable (their --kubeconfig takes one file). See {@link kubeTarget}.
   */
  kubeconfigEnv?: boolean | undefined;
  /** A context other than the kubeconfig's current one. */
  context?: string | undefined;
  /** kubectl's --request-timeout for each request, e.g. "30s". Default 30s. */
  requestTimeout?: string | undefined;
}

export const DEFAULT_REQUEST_TIMEOUT = "30s";

/**
 * The target for the kubeconfig files a command reads: one file is named with --kubeconfig;
 * several (KUBECONFIG's list) are handed to each tool as KUBECONFIG, joined as the variable
 * joins them, so that the tool merges them itself, exactly as kubectl does.
 */
export function kubeTarget(
  files: readonly string[],
  extra: Omit<KubeTarget, "kubeconfig" | "kubeconfigEnv"> = {},
): KubeTarget {
  const [only] = files;
  if (only === undefined) throw new TypeError("kubeTarget needs at least one kubeconfig file");
  return files.length === 1
    ? { ...extra, kubeconfig: only }
    : { ...extra, kubeconfig: files.join(delimiter), kubeconfigEnv: true };
}

/** The files a target's kubeconfig names (one, or KUBECONFIG's list). */
export function kubeconfigFiles(target: Pick<KubeTarget, "kubeconfig" | "kubeconfigEnv">): string[] {
  return target.kubeconfigEnv === true
    ? target.kubeconfig.split(delimiter).filter((f) => f !== "")
    : [target.kubeconfig];
}

/** `--kubeconfig K` for one file; nothing for a list (it goes in the environment: {@link kubeconfigEnv}). */
const kubeconfigArgs = (target: KubeTarget): string[] =>
  target.kubeconfigEnv === true ? [] : ["--kubeconfig", target.kubeconfig];

/** `KUBECONFIG=<list>` over `env` when the target is a list of files. */
const kubeconfigEnv = (
  target: KubeTarget,
  env: Record<string, string> | undefined,
): Record<string, string> | undefined =>
  target.kubeconfigEnv === true ? { ...env, KUBECONFIG: target.kubeconfig } : env;

/**
 * `kubectl --kubeconfig K [--context C] --request-timeout=T ARGS…`. kubectl, and the exec
 * plugin a kubeconfig names, get only what every child gets (@nodekit/process
 * INHERITED_ENV: PATH, HOME, locale, proxies, …), never the user's KUBECONFIG: the
 * kubeconfig is named (a list of several files as `KUBECONFIG=A:B kubectl …`).
 */
export function kubectlCall(
  target: KubeTarget,
  args: readonly string[],
  extra: Partial<CommandCall> = {},
): CommandCall {
  const env = kubeconfigEnv(target, extra.env);
  return {
    ...extra,
    ...(env === undefined ? {} : { env }),
    command: "kubectl",
    args: [
      ...kubeconfigArgs(target),
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

/** A helm or clusterctl call: ARGS… --kubeconfig K [CONTEXT_FLAG C], with the environment given. */
function toolCall(
  command: "helm" | "clusterctl",
  contextFlag: string,
  target: KubeTarget,
  args: readonly string[],
  env: Record<string, string>,
  extra: Partial<CommandCall>,
): CommandCall {
  return {
    ...extra,
    command,
    args: [...args, ...kubeconfigArgs(target), ...(target.context === undefined ? [] : [contextFlag, target.context])],
    env: kubeconfigEnv(target, env) ?? env,
  };
}

/** A helm or clusterctl call builder: the target, the arguments, the environment, anything else of the call. */
type ToolCallBuilder = (
  target: KubeTarget,
  args: readonly string[],
  env: Record<string, string>,
  extra?: Partial<CommandCall>,
) => CommandCall;

/** `helm ARGS… --kubeconfig K [--kube-context C]`, with the environment given (see isolatedToolEnv). */
export const helmCall: ToolCallBuilder = (target, args, env, extra = {}) =>
  toolCall("helm", "--kube-context", target, args, env, extra);

/** `clusterctl ARGS… --kubeconfig K [--kubeconfig-context C]`, with the environment given. */
export const clusterctlCall: ToolCallBuilder = (target, args, env, extra = {}) =>
  toolCall("clusterctl", "--kubeconfig-context", target, args, env, extra);
