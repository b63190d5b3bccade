import { stat } from "node:fs/promises";
import { ExitCode, UserError } from "@nodekit/errors";
import { CommandFailedError, type ProcessRunner } from "@nodekit/process";

/** How commands that read the site cluster directly (get providers, get kubeconfig) reach it. */
export interface SiteCluster {
  /** The site cluster's kubeconfig (the site's `--kubeconfig`). */
  kubeconfig: string;
  runner: ProcessRunner;
  /** Per request; kubectl's --request-timeout. Default 30s. */
  requestTimeout?: string;
}

/** The outcome of one kubectl call that may name something that is not there. */
export type KubectlAnswer = { found: true; stdout: string } | { found: false; stderr: string };

/**
 * Runs `kubectl --kubeconfig <site> <args>`. A NotFound answer is returned (the caller
 * knows what it means); every other failure becomes a user error that says whether the
 * cluster was unreachable, the identity was refused, or kubectl is missing.
 */
export async function kubectl(cluster: SiteCluster, args: readonly string[], doing: string): Promise<KubectlAnswer> {
  await assertKubeconfig(cluster.kubeconfig);
  const call = {
    command: "kubectl",
    args: ["--kubeconfig", cluster.kubeconfig, `--request-timeout=${cluster.requestTimeout ?? "30s"}`, ...args],
  };
  try {
    const result = await cluster.runner.run(call);
    return { found: true, stdout: result.stdout };
  } catch (error) {
    if (!(error instanceof CommandFailedError)) throw error;
    if (error.notFound) {
      throw new UserError("KUBECTL_NOT_FOUND", "kubectl was not found on PATH", {
        exitCode: ExitCode.Precondition,
        why: `${doing} reads the site cluster directly with kubectl`,
        next: "install kubectl (https://kubernetes.io/docs/tasks/tools/) and make sure it is on PATH",
      });
    }
    const said = kubectlMessage(error.stderr);
    if (/\(NotFound\)|\bnot found\b/.test(error.stderr) && !/no such host/.test(error.stderr)) {
      return { found: false, stderr: said };
    }
    throw siteClusterError(cluster.kubeconfig, said, doing, error);
  }
}

/** kubectl's own message, without its "Error from server (X):" prefix noise kept as is. */
function kubectlMessage(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    // klog lines (E1130 23:04:10.055016 …) are kubectl's internals; its message for people comes last.
    .filter((line) => line !== "" && !/^[IWEF]\d{4} /.test(line));
  return (lines.at(-1) ?? stderr.trim()) || "kubectl failed without a message";
}

function siteClusterError(kubeconfig: string, said: string, doing: string, cause: unknown): UserError {
  if (/\(Forbidden\)|forbidden/i.test(said)) {
    return new UserError("SITE_CLUSTER_FORBIDDEN", `the site cluster refused ${doing}: ${said}`, {
      exitCode: ExitCode.Unauthorized,
      why: `the identity in ${kubeconfig} lacks an RBAC grant ${doing} needs`,
      next: `check what it may do with: kubectl --kubeconfig ${kubeconfig} auth can-i --list`,
      cause,
    });
  }
  if (/\(Unauthorized\)|must be logged in|Unauthorized/i.test(said)) {
    return new UserError(
      "SITE_CLUSTER_UNAUTHORIZED",
      `the site cluster did not accept the credentials in ${kubeconfig}`,
      {
        exitCode: ExitCode.Unauthorized,
        why: `kubectl said: ${said}`,
        next: "get a fresh kubeconfig for the site cluster and point the site at it (nvkectl config set-site NAME --url URL --kubeconfig FILE)",
        cause,
      },
    );
  }
  if (
    /Unable to connect|connection to the server|was refused|connection refused|dial tcp|no such host|i\/o timeout|deadline exceeded|Client\.Timeout|TLS handshake|x509|timeout/i.test(
      said,
    )
  ) {
    return new UserError("SITE_CLUSTER_UNREACHABLE", `cannot reach the site cluster in ${kubeconfig}`, {
      exitCode: ExitCode.Unreachable,
      why: `kubectl said: ${said}`,
      next: [
        `check that its API server is up and reachable from here: kubectl --kubeconfig ${kubeconfig} get --raw /readyz`,
        "if the kubeconfig is for another cluster, point the site at the right one (nvkectl config set-site)",
      ],
      cause,
    });
  }
  return new UserError("SITE_CLUSTER_FAILED", `kubectl failed while ${doing}: ${said}`, {
    exitCode: ExitCode.CheckFailed,
    next: "rerun with -v to see the kubectl command line",
    cause,
  });
}

async function assertKubeconfig(path: string): Promise<void> {
  const isFile = await stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!isFile) {
    throw new UserError("KUBECONFIG_NOT_FOUND", `the site's kubeconfig ${path} does not exist or is not a file`, {
      exitCode: ExitCode.NotFound,
      next: "point the site at the site cluster's kubeconfig: nvkectl config set-site NAME --url URL --kubeconfig FILE",
    });
  }
}
