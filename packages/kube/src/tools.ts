import { UserError } from "@nodekit/errors";
import { kubeErrorCodes as errorCodes } from "@nodekit/kube-calls";
import { type CommandCall, CommandFailedError, type ProcessRunner } from "@nodekit/process";
import { classifyToolStderr, type KubeFailure } from "./classify.ts";
import { type KubeWhere, kubeError } from "./error.ts";

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
