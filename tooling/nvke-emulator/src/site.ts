import { AuthenticationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { keepConnections } from "@nodekit/kube";

/** One read of an auth ConfigMap candidate. */
export type ConfigMapRead =
  | { found: true; data: Record<string, string> }
  | { found: false; reason: "NotFound" | "Forbidden"; message: string };

export interface TokenReviewResult {
  authenticated: boolean;
  username?: string;
  audiences?: string[];
  error?: string;
}

/**
 * What the emulator does in the site's Kubernetes cluster, through the kubeconfig it was
 * given — the same calls the real controller makes with its ServiceAccount.
 */
export interface SiteCluster {
  readonly server: string;
  readConfigMap(namespace: string, name: string): Promise<ConfigMapRead>;
  reviewToken(token: string, audience: string): Promise<TokenReviewResult>;
  /** Creates or replaces the Cluster API kubeconfig Secret (data key `value`), creating the namespace if needed. */
  writeKubeconfigSecret(namespace: string, clusterName: string, kubeconfig: string): Promise<void>;
  /** Deletes it; a Secret that is already gone is fine. */
  deleteKubeconfigSecret(namespace: string, clusterName: string): Promise<void>;
}

const status = (error: unknown): number | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "number" ? code : undefined;
};

export function kubeconfigSecretName(clusterName: string): string {
  return `${clusterName}-kubeconfig`;
}

export function connectSite(kubeconfigPath: string): SiteCluster {
  // One connection per cluster, not a TLS handshake per request (what nvkectl's clients do too).
  const kc = keepConnections(new KubeConfig());
  kc.loadFromFile(kubeconfigPath);
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new Error(`kubeconfig ${kubeconfigPath} has no current cluster`);
  const core = kc.makeApiClient(CoreV1Api);
  const authn = kc.makeApiClient(AuthenticationV1Api);

  return {
    server,
    async readConfigMap(namespace, name) {
      try {
        const configMap = await core.readNamespacedConfigMap({ name, namespace });
        return { found: true, data: configMap.data ?? {} };
      } catch (error) {
        const code = status(error);
        if (code === 404) return { found: false, reason: "NotFound", message: `${namespace}/${name} not found` };
        if (code === 403)
          return { found: false, reason: "Forbidden", message: `reading ${namespace}/${name} is forbidden` };
        throw error;
      }
    },
    async reviewToken(token, audience) {
      const review = await authn.createTokenReview({
        body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token, audiences: [audience] } },
      });
      const result = review.status ?? {};
      return {
        authenticated: result.authenticated === true,
        ...(result.user?.username === undefined ? {} : { username: result.user.username }),
        ...(result.audiences === undefined ? {} : { audiences: result.audiences }),
        ...(result.error === undefined ? {} : { error: result.error }),
      };
    },
    async writeKubeconfigSecret(namespace, clusterName, kubeconfig) {
      const name = kubeconfigSecretName(clusterName);
      try {
        await core.createNamespace({ body: { metadata: { name: namespace } } });
      } catch (error) {
        if (status(error) !== 409) throw error;
      }
      const body = {
        apiVersion: "v1",
        kind: "Secret",
        type: "cluster.x-k8s.io/secret",
        metadata: {
          name,
          namespace,
          labels: { "cluster.x-k8s.io/cluster-name": clusterName, "app.kubernetes.io/managed-by": "nvke-emulator" },
        },
        data: { value: Buffer.from(kubeconfig).toString("base64") },
      };
      try {
        await core.createNamespacedSecret({ namespace, body });
      } catch (error) {
        if (status(error) !== 409) throw error;
        await core.replaceNamespacedSecret({ name, namespace, body });
      }
    },
    async deleteKubeconfigSecret(namespace, clusterName) {
      try {
        await core.deleteNamespacedSecret({ name: kubeconfigSecretName(clusterName), namespace });
      } catch (error) {
        if (status(error) !== 404) throw error;
      }
    },
  };
}
