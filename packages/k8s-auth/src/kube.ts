import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { CoreV1Api, KubeConfig, ObservableMiddleware } from "@kubernetes/client-node";
import { ExitCode, UserError } from "@nodekit/errors";

/**
 * The cluster to talk to: a kubeconfig file path, or a KubeConfig a platform team has
 * already loaded (its current context is used).
 */
export type KubeconfigSource = string | KubeConfig;

/** One connection to the Kubernetes API, with what error messages need to name it. */
export interface KubeClient {
  readonly core: CoreV1Api;
  /** Per-request options: a timeout on every call. */
  readonly requestOptions: Parameters<CoreV1Api["readNamespacedConfigMap"]>[1];
  /** "kubeconfig /home/op/lab.kubeconfig" or "the given KubeConfig". */
  readonly kubeconfigName: string;
  /** The kubeconfig path for `kubectl --kubeconfig`, when there is one. */
  readonly kubeconfigPath: string | undefined;
  readonly server: string | undefined;
  /** The kubeconfig's user entry name (the authenticated identity may differ). */
  readonly userName: string | undefined;
}

export interface ConnectOptions {
  requestTimeoutMs: number;
}

/**
 * Loads @kubernetes/client-node (≈ 0.7 s) and opens the kubeconfig. The only place the
 * client library is imported, and only when the cluster has to be asked something.
 */
export async function connect(source: KubeconfigSource, options: ConnectOptions): Promise<KubeClient> {
  const k8s = await import("@kubernetes/client-node");
  let kc: KubeConfig;
  let kubeconfigPath: string | undefined;
  if (typeof source === "string") {
    kubeconfigPath = resolve(source);
    await assertFile(kubeconfigPath);
    kc = new k8s.KubeConfig();
    try {
      kc.loadFromFile(kubeconfigPath);
    } catch (error) {
      throw new UserError("AUTH_KUBECONFIG_INVALID", `kubeconfig ${kubeconfigPath} cannot be loaded`, {
        exitCode: ExitCode.InvalidInput,
        why: error instanceof Error ? error.message : String(error),
        next: "point the site at a valid kubeconfig for the site cluster (bootstrap leaves it as <site>.kubeconfig)",
      });
    }
  } else {
    kc = source;
  }
  const kubeconfigName = kubeconfigPath === undefined ? "the given KubeConfig" : `kubeconfig ${kubeconfigPath}`;
  const cluster = kc.getCurrentCluster();
  if (cluster === null) {
    throw new UserError("AUTH_KUBECONFIG_INVALID", `${kubeconfigName} has no current cluster`, {
      exitCode: ExitCode.InvalidInput,
      why: `its current context ${JSON.stringify(kc.getCurrentContext() ?? "")} does not name a cluster it defines`,
      next: "set current-context to a context whose cluster is the site cluster",
    });
  }
  const timeoutMs = options.requestTimeoutMs;
  // The object API hands call-time middleware to the Observable API, so it returns Observables.
  const timeout: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      return new k8s.Observable(Promise.resolve(context));
    },
    post: (context) => new k8s.Observable(Promise.resolve(context)),
  };
  const requestOptions: KubeClient["requestOptions"] = { middleware: [timeout], middlewareMergeStrategy: "append" };
  return {
    core: kc.makeApiClient(k8s.CoreV1Api),
    requestOptions,
    kubeconfigName,
    kubeconfigPath,
    server: cluster.server,
    userName: kc.getCurrentUser()?.name,
  };
}

async function assertFile(path: string): Promise<void> {
  let isFile = false;
  let why: string | undefined;
  try {
    isFile = (await stat(path)).isFile();
  } catch (error) {
    why = errnoCode(error) === "ENOENT" ? undefined : (errnoCode(error) ?? String(error));
  }
  if (!isFile) {
    throw new UserError("KUBECONFIG_NOT_FOUND", `kubeconfig ${path} does not exist or is not a file`, {
      exitCode: ExitCode.NotFound,
      why,
      next: "point the site at the site cluster's kubeconfig (site bootstrap leaves it as <site>.kubeconfig)",
    });
  }
}

/** What a failed Kubernetes API call told us, without the client library's types. */
export interface ApiFailure {
  /** HTTP status, when the API server answered. */
  status: number | undefined;
  /** The Status object's `message` (or the transport error's description). */
  message: string;
  /** The Status object's `reason` (Forbidden, NotFound, ...). */
  reason: string | undefined;
  /** For transport failures: ECONNREFUSED, a TLS code, TimeoutError, ... */
  transportCode: string | undefined;
}

/** Reads an ApiException (`code` + raw Status JSON `body`) or an undici transport error. */
export function describeFailure(error: unknown): ApiFailure {
  if (isRecord(error) && typeof error.code === "number" && "body" in error) {
    const status = error.code;
    const body = parseStatus(error.body);
    return {
      status,
      message: body.message ?? `HTTP ${status}`,
      reason: body.reason,
      transportCode: undefined,
    };
  }
  // undici: TypeError("fetch failed") with the socket/TLS error as `cause`; AbortSignal.timeout: TimeoutError.
  const chain: unknown[] = [];
  for (let current: unknown = error; isRecord(current) && chain.length < 5; current = current.cause) {
    chain.push(current);
  }
  for (const link of chain) {
    if (!isRecord(link)) continue;
    if (link.name === "TimeoutError" || link.code === "UND_ERR_CONNECT_TIMEOUT") {
      return { status: undefined, message: "no answer in time", reason: undefined, transportCode: "TimeoutError" };
    }
    if (typeof link.code === "string") {
      return {
        status: undefined,
        message: typeof link.message === "string" && link.message !== "" ? link.message : link.code,
        reason: undefined,
        transportCode: link.code,
      };
    }
  }
  const innermost = chain.at(-1);
  const message =
    isRecord(innermost) && typeof innermost.message === "string" ? innermost.message : String(error ?? "unknown error");
  return { status: undefined, message, reason: undefined, transportCode: undefined };
}

function parseStatus(body: unknown): { message?: string; reason?: string } {
  let value: unknown = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return body.trim() === "" ? {} : { message: body.trim().slice(0, 500) };
    }
  }
  if (!isRecord(value)) return {};
  return {
    ...(typeof value.message === "string" ? { message: value.message } : {}),
    ...(typeof value.reason === "string" ? { reason: value.reason } : {}),
  };
}

const TLS_CODE = /^(CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_TLS|ERR_SSL|HOSTNAME_MISMATCH)/;

/**
 * A failure that is not about the auth ConfigMap or the ServiceAccount: the cluster could
 * not be reached, TLS failed, or the API server did not accept the kubeconfig's credentials.
 */
export function clusterError(client: KubeClient, failure: ApiFailure, doing: string, cause?: unknown): UserError {
  const where = `${client.kubeconfigName} (server ${client.server ?? "unknown"})`;
  if (failure.status === 401) {
    return new UserError(
      "AUTH_KUBECONFIG_UNAUTHORIZED",
      `the site cluster did not accept the credentials in ${where}`,
      {
        exitCode: ExitCode.Unauthorized,
        why: `${doing} was answered 401 Unauthorized: the kubeconfig's certificate or token is not valid for this cluster (expired, revoked, or for another cluster)`,
        next: [
          "get a fresh kubeconfig for the site cluster and point the site at it (nvkectl config set-site NAME --url URL --kubeconfig FILE)",
          `check it with: ${kubectl(client)} auth whoami`,
        ],
        cause,
      },
    );
  }
  if (failure.status !== undefined) {
    return new UserError("AUTH_KUBE_API_FAILED", `the site cluster refused ${doing}: ${failure.message}`, {
      exitCode: failure.status >= 500 || failure.status === 429 ? ExitCode.Unreachable : ExitCode.Rejected,
      why: `HTTP ${failure.status}${failure.reason ? ` ${failure.reason}` : ""} from ${where}`,
      next: `retry; if it persists, check the API server with: ${kubectl(client)} get --raw /readyz`,
      cause,
    });
  }
  const tls = failure.transportCode !== undefined && TLS_CODE.test(failure.transportCode);
  return new UserError("AUTH_CLUSTER_UNREACHABLE", `cannot reach the site cluster at ${client.server ?? "unknown"}`, {
    exitCode: ExitCode.Unreachable,
    why: tls
      ? `TLS verification failed (${failure.transportCode}): ${failure.message}; the certificate-authority in ${client.kubeconfigName} does not match the server`
      : `${doing} failed: ${failure.message} (using ${client.kubeconfigName})`,
    next: tls
      ? "use the kubeconfig the site bootstrap wrote for this cluster, or fix its certificate-authority-data"
      : [
          `check that the API server is up and reachable from here: ${kubectl(client)} get --raw /readyz`,
          "if the server address is wrong, point the site at the right kubeconfig",
        ],
    cause,
  });
}

/** `kubectl --kubeconfig FILE` (or plain `kubectl` when the caller passed a KubeConfig object). */
export function kubectl(client: Pick<KubeClient, "kubeconfigPath">): string {
  return client.kubeconfigPath === undefined ? "kubectl" : `kubectl --kubeconfig ${client.kubeconfigPath}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function errnoCode(error: unknown): string | undefined {
  return isRecord(error) && typeof error.code === "string" ? error.code : undefined;
}
