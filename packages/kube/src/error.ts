import { delimiter } from "node:path";
import { UserError } from "@nodekit/errors";
import { kubeErrorCodes as errorCodes } from "@nodekit/kube-calls";
import type { KubeFailure } from "./classify.ts";

/** What an error message needs to name the cluster and the call. */
export interface KubeWhere {
  /** What was being done, for "… while reading the providers' CRDs". */
  doing: string;
  /** The kubeconfig path, when there is one. */
  kubeconfig?: string | undefined;
  /** The API server URL, when known. */
  server?: string | undefined;
  /** What the cluster is to the user: "the site cluster"; default "the cluster". */
  cluster?: string | undefined;
}

/**
 * `kubectl --kubeconfig FILE` (or `kubectl` when the kubeconfig is not a file; for
 * KUBECONFIG's list of several files, `KUBECONFIG=A:B kubectl`, the only way kubectl merges them).
 */
export function kubectlFor(kubeconfig: string | undefined): string {
  if (kubeconfig === undefined) return "kubectl";
  return kubeconfig.includes(delimiter) ? `KUBECONFIG=${kubeconfig} kubectl` : `kubectl --kubeconfig ${kubeconfig}`;
}

function named(where: KubeWhere): string {
  const file = where.kubeconfig === undefined ? "the given kubeconfig" : `kubeconfig ${where.kubeconfig}`;
  return where.server === undefined ? file : `${file} (server ${where.server})`;
}

/**
 * The user error for a classified failure. `not-found` and `resource-type-unknown` are
 * answers the caller interprets (it knows what was asked for); called with them anyway,
 * they become KUBE_API_REJECTED with the server's message.
 */
export function kubeError(failure: KubeFailure, where: KubeWhere, cause?: unknown): UserError {
  const facts = {
    ...(where.kubeconfig === undefined ? {} : { kubeconfig: where.kubeconfig }),
    ...(where.server === undefined ? {} : { server: where.server }),
    kind: failure.kind,
  };
  const kubectl = kubectlFor(where.kubeconfig);
  const cluster = where.cluster ?? "the cluster";
  const common = { facts, cause };
  switch (failure.kind) {
    case "config-invalid":
      return new UserError(errorCodes.KUBECONFIG_INVALID, `${named(where)} cannot be used: ${failure.message}`, {
        ...common,
        why: `${where.doing} needs a kubeconfig whose current context names a cluster and a user it defines`,
        next: [
          `check it with: ${kubectl} config view --minify`,
          `list its contexts with: ${kubectl} config get-contexts`,
        ],
      });
    case "credential-plugin-missing": {
      const plugin = failure.plugin ?? "its exec credential plugin";
      return new UserError(
        errorCodes.KUBE_CREDENTIAL_PLUGIN_MISSING,
        `the credential plugin ${plugin} that ${named(where)} runs is not installed`,
        {
          ...common,
          why: `${where.doing} gets its credentials by running ${plugin} (users[].user.exec in the kubeconfig); it was not found on PATH: ${failure.message}`,
          next: [`install ${plugin} and make sure it is on PATH`, "or use a kubeconfig with a certificate or token"],
        },
      );
    }
    case "unauthorized":
      return new UserError(
        errorCodes.KUBE_UNAUTHORIZED,
        `${cluster} did not accept the credentials in ${named(where)}`,
        {
          ...common,
          why: `${where.doing} was answered 401 Unauthorized: the kubeconfig's certificate or token is not valid for this cluster (expired, revoked, or for another cluster): ${failure.message}`,
          next: [`get a fresh kubeconfig for ${cluster}`, `check it with: ${kubectl} auth whoami`],
        },
      );
    case "forbidden":
      return new UserError(errorCodes.KUBE_FORBIDDEN, `${cluster} refused ${where.doing}: ${failure.message}`, {
        ...common,
        why: `the identity in ${named(where)} lacks the RBAC grant needed for ${where.doing}`,
        next: `see what it may do with: ${kubectl} auth can-i --list`,
      });
    case "unreachable":
      return new UserError(
        errorCodes.KUBE_UNREACHABLE,
        `cannot reach ${cluster} ${where.server === undefined ? `in ${where.kubeconfig ?? "the given kubeconfig"}` : `at ${where.server}`}`,
        {
          ...common,
          why: failure.tls
            ? `TLS verification failed while ${where.doing}: ${failure.message}; the certificate-authority in ${named(where)} does not match the server`
            : `${where.doing} failed: ${failure.message} (using ${named(where)})`,
          next: failure.tls
            ? "use the kubeconfig written for this cluster, or fix its certificate-authority-data"
            : [
                `check that its API server is up and reachable from here: ${kubectl} get --raw /readyz`,
                "if the kubeconfig is for another cluster, use the right one",
              ],
        },
      );
    case "unavailable":
      return new UserError(
        errorCodes.KUBE_API_UNAVAILABLE,
        `${cluster} could not serve ${where.doing}: ${failure.message}`,
        {
          ...common,
          why: `${failure.status === undefined ? "" : `HTTP ${failure.status} `}${failure.reason ?? ""} from ${named(where)}`.trim(),
          next: `retry; if it persists, check the API server with: ${kubectl} get --raw /readyz`,
        },
      );
    case "rejected":
    case "not-found":
    case "resource-type-unknown":
      return new UserError(errorCodes.KUBE_API_REJECTED, `${cluster} refused ${where.doing}: ${failure.message}`, {
        ...common,
        why: `${failure.status === undefined ? "" : `HTTP ${failure.status} `}${failure.reason ?? failure.kind} from ${named(where)}`.trim(),
      });
    case "registry-unauthorized":
      return new UserError(
        errorCodes.KUBE_REGISTRY_UNAUTHORIZED,
        `${where.doing} failed: the registry refused it: ${failure.message}`,
        {
          ...common,
          why: "the registry asked for credentials and was given none it accepts (none configured for it, or wrong ones)",
          next: "give the registry's credentials in a registry config the tool reads (helm registry login writes one), then run it again",
        },
      );
    case "failed":
      return new UserError(errorCodes.KUBE_COMMAND_FAILED, `${where.doing} failed: ${failure.message}`, {
        ...common,
        next: "rerun with -v to see the command line and its whole output",
      });
  }
}
