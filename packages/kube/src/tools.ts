import { UserError } from "@nodekit/errors";
import { type CommandCall, CommandFailedError, type ProcessRunner } from "@nodekit/process";
import { classifyToolStderr, type KubeFailure } from "./classify.ts";
import { type KubeWhere, kubeError } from "./error.ts";
import { errorCodes } from "./errors.ts";

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

/** An answer the caller interprets: the call worked, or what it asked for is not there. */
export type KubeAnswer =
  | { found: true; stdout: string; stderr: string }
  | { found: false; failure: KubeFailure & { kind: "not-found" | "resource-type-unknown" } };

function isAbsence(failure: KubeFailure): failure is KubeFailure & { kind: "not-found" | "resource-type-unknown" } {
  return failure.kind === "not-found" || failure.kind === "resource-type-unknown";
}

/**
 * Runs one kubectl/helm/clusterctl call that reads. A missing object or resource type is an
 * answer (the caller knows what it asked for); every other failure is thrown as the user
 * error of its class (KUBE_UNREACHABLE, KUBE_FORBIDDEN, KUBECONFIG_INVALID, KUBE_TOOL_MISSING, …).
 */
export async function runKube(runner: ProcessRunner, call: CommandCall, where: KubeWhere): Promise<KubeAnswer> {
  try {
    const result = await runner.run(call);
    return { found: true, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    if (!(error instanceof CommandFailedError)) throw error;
    if (error.notFound) throw toolMissing(call.command, where.doing);
    const failure = classifyToolStderr(error.stderr);
    if (isAbsence(failure)) return { found: false, failure };
    throw kubeError(failure, where, error);
  }
}

/** Like runKube, but a missing object is an error too: for calls that change the cluster. */
export async function runKubeStrict(
  runner: ProcessRunner,
  call: CommandCall,
  where: KubeWhere,
): Promise<{ stdout: string; stderr: string }> {
  try {
    const result = await runner.run(call);
    return { stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    if (error instanceof CommandFailedError) throw kubeToolError(error, call, where);
    throw error;
  }
}

/** The user error for a tool that is not on PATH. */
export function toolMissing(tool: string, doing: string): UserError {
  return new UserError(errorCodes.KUBE_TOOL_MISSING, `${tool} was not found on PATH`, {
    why: `${doing} runs ${tool}`,
    next: `install ${tool} and make sure it is on PATH`,
    facts: { tool },
  });
}

/** The user error of its class for a failed kubectl/helm/clusterctl call. */
export function kubeToolError(error: CommandFailedError, call: CommandCall, where: KubeWhere): UserError {
  if (error.notFound) return toolMissing(call.command, where.doing);
  return kubeError(classifyToolStderr(error.stderr), where, error);
}
