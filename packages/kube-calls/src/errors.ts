import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How reaching a Kubernetes cluster can fail, whichever way it is reached (kubectl, helm, clusterctl, the client library). */
export const errorCodes = defineErrorCodes("kube", {
  KUBECONFIG_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The kubeconfig file named does not exist or is not a file.",
  },
  KUBECONFIG_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The kubeconfig cannot be used: it does not parse, or its current context names a context, cluster or user it does not define.",
  },
  KUBE_CONTEXT_NOT_FOUND: {
    exitCode: ExitCode.Usage,
    meaning: "--context names a context the kubeconfig (every file KUBECONFIG lists) does not define.",
  },
  KUBE_CREDENTIAL_PLUGIN_MISSING: {
    exitCode: ExitCode.Precondition,
    meaning: "The kubeconfig's user runs an exec credential plugin that is not installed (not on PATH).",
  },
  KUBE_UNREACHABLE: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "The cluster's API server could not be reached: connection refused, DNS failure, TLS failure or no answer in time.",
  },
  KUBE_UNAUTHORIZED: {
    exitCode: ExitCode.Unauthorized,
    meaning:
      "The API server did not accept the kubeconfig's credentials (401): expired, revoked, or for another cluster.",
  },
  KUBE_FORBIDDEN: {
    exitCode: ExitCode.Unauthorized,
    meaning: "The API server refused the request (403): the identity lacks an RBAC grant it needs.",
  },
  KUBE_API_UNAVAILABLE: {
    exitCode: ExitCode.Unreachable,
    meaning: "The API server answered that it cannot serve the request now (5xx, 429 or a server-side timeout).",
  },
  KUBE_API_REJECTED: {
    exitCode: ExitCode.Rejected,
    meaning: "The API server refused the request as invalid or conflicting; its message is shown as it sent it.",
  },
  KUBE_TOOL_MISSING: {
    exitCode: ExitCode.Precondition,
    meaning: "kubectl, helm or clusterctl is not on PATH.",
  },
  KUBE_TOOL_TOO_OLD: {
    exitCode: ExitCode.Precondition,
    meaning: "kubectl, helm or clusterctl on PATH is older than the version needed.",
  },
  KUBE_REGISTRY_UNAUTHORIZED: {
    exitCode: ExitCode.Unauthorized,
    meaning: "helm (or clusterctl) was refused by an OCI registry: no credentials for it, or ones it does not accept.",
  },
  KUBE_COMMAND_FAILED: {
    exitCode: ExitCode.CheckFailed,
    meaning: "kubectl, helm or clusterctl failed for a reason not classified above; its own message is shown.",
  },
});
