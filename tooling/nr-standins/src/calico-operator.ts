import type { AppsV1Api, ConfigurationOptions, CoreV1Api, CustomObjectsApi, Watch } from "@kubernetes/client-node";

// A stand-in for Calico's tigera operator and calico-node, for apps/nr's tests and the
// sandbox's agent cluster: nothing runs pods there (a kube-apiserver with no kubelet). It
// does to the API what they would, and no more, so that nr's Calico phase and the k3s
// stand-in's NotReady node (k3s-install.ts) meet the same signals as on a VM.
// What it models, with sources (../shared/UPSTREAM.md, "Calico (tigera operator)"): the node
// stays NotReady until a CNI runs (kubernetes/kubeadm#212, "cni config uninitialized"); the
// TigeraStatus `calico` Available is the documented readiness signal (tigera/docs:
// calico_versioned_docs/version-3.30/getting-started/kubernetes/k3s/quickstart.mdx); and, like
// the operator's informers, it reconciles on watch events rather than on a timer.

interface Condition {
  type: string;
  status: string;
  message?: string;
}

const TIGERA = { group: "operator.tigera.io", version: "v1" } as const;

/** The API's answer was 404: the object (or its CRD) is not there. */
const notFound = (error: unknown) => (error as { code?: number }).code === 404;

/** Whether the read finds the object (a 404 says it is not there; other failures are thrown). */
const found = (read: Promise<unknown>) =>
  read.then(
    () => true,
    (error: unknown) => {
      if (notFound(error)) return false;
      throw error;
    },
  );

interface Clients {
  core: CoreV1Api;
  custom: CustomObjectsApi;
  apps: AppsV1Api;
  mergePatch: ConfigurationOptions;
  strategicPatch: ConfigurationOptions;
  watch: Watch;
}

/** The API clients for the kubeconfig (client-node is loaded when the stand-in starts, in this process: no kubectl per reconcile). */
async function clientsFor(kubeconfig: string): Promise<Clients> {
  const [k8s, { keepConnections }] = await Promise.all([import("@kubernetes/client-node"), import("@nodekit/kube")]);
  // One connection per cluster, not a TLS handshake per request (what nr's clients do too).
  const config = keepConnections(new k8s.KubeConfig());
  config.loadFromFile(kubeconfig);
  return {
    core: config.makeApiClient(k8s.CoreV1Api),
    custom: config.makeApiClient(k8s.CustomObjectsApi),
    apps: config.makeApiClient(k8s.AppsV1Api),
    mergePatch: k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    strategicPatch: k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
    watch: new k8s.Watch(config),
  };
}

/** The CRDs: the Installation's and TigeraStatus's watches start once the tigera operator's are served. */
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/**
 * What the operator and calico-node watch (as their informers do): a change to any of them
 * is reconciled at once.
 */
const WATCHED = [
  CRDS,
  "/api/v1/nodes",
  "/apis/apps/v1/namespaces/tigera-operator/deployments",
  `/apis/${TIGERA.group}/${TIGERA.version}/installations`,
  `/apis/${TIGERA.group}/${TIGERA.version}/tigerastatuses`,
];

export interface CalicoOperatorOptions {
  /**
   * How soon a failed reconcile, or a watch that could not start or broke, is tried again (default 300 ms, as a test wants it; the sandbox waits longer).
   */
  retryMs?: number;
}

/**
 * A stand-in for Calico's tigera operator and calico-node, reconciling on each change it
 * watches (nodes, the operator's Deployment, the Installation, the TigeraStatus) as a
 * controller's informers do: an idle cluster costs it nothing, and no change waits for a
 * timer.
 * TigeraStatus `calico` is Available while the Installation `default` exists and the
 * operator's Deployment `tigera-operator/tigera-operator` is there (Calico's documented
 * readiness signal, docs.tigera.io "Install Calico" / the k3s quickstart's `kubectl wait …
 * tigerastatus`); without the operator it is not. While Calico is Available, a node the k3s
 * stand-in registered NotReady for want of a CNI ("cni plugin not initialized",
 * k3s-io/k3s#12583) is marked Ready, as the kubelet reports once calico-node has written the
 * CNI config. Stops when the returned function is called.
 */
export function calicoOperator(kubeconfig: string, options: CalicoOperatorOptions = {}): () => void {
  const clients = clientsFor(kubeconfig);
  // Avoids an unhandled rejection before the first reconcile awaits it (that one reports it).
  clients.catch(() => undefined);
  /** One reconcile; false when it failed (it is tried again, as a controller requeues). */
  const reconcile = async (): Promise<boolean> => {
    try {
      const { core, custom, apps, mergePatch, strategicPatch } = await clients;
      if (!(await found(custom.getClusterCustomObject({ ...TIGERA, plural: "installations", name: "default" }))))
        return true;
      const available = await found(
        apps.readNamespacedDeployment({ name: "tigera-operator", namespace: "tigera-operator" }),
      );
      const current = (await custom
        .getClusterCustomObject({ ...TIGERA, plural: "tigerastatuses", name: "calico" })
        .catch((error: unknown) => {
          if (notFound(error)) return undefined;
          throw error;
        })) as { status?: { conditions?: Condition[] } } | undefined;
      const was = current?.status?.conditions?.find((c) => c.type === "Available")?.status;
      if (current === undefined) {
        await custom.createClusterCustomObject({
          ...TIGERA,
          plural: "tigerastatuses",
          body: { apiVersion: "operator.tigera.io/v1", kind: "TigeraStatus", metadata: { name: "calico" }, spec: {} },
        });
      }
      if (was !== (available ? "True" : "False")) {
        const at = new Date().toISOString();
        await custom.patchClusterCustomObjectStatus(
          {
            ...TIGERA,
            plural: "tigerastatuses",
            name: "calico",
            body: {
              status: {
                conditions: [
                  available
                    ? {
                        type: "Available",
                        status: "True",
                        reason: "AllObjectsAvailable",
                        message: "All objects are available (stand-in)",
                        lastTransitionTime: at,
                      }
                    : {
                        type: "Available",
                        status: "False",
                        reason: "ResourceNotReady",
                        message: "the tigera operator is not running (stand-in)",
                        lastTransitionTime: at,
                      },
                  {
                    type: "Degraded",
                    status: available ? "False" : "True",
                    reason: available ? "AllObjectsAvailable" : "ResourceNotReady",
                    message: "",
                    lastTransitionTime: at,
                  },
                ],
              },
            },
          },
          mergePatch,
        );
      }
      if (!available) return true;
      const nodes = await core.listNode();
      for (const node of nodes.items) {
        const ready = node.status?.conditions?.find((c) => c.type === "Ready");
        const name = node.metadata?.name;
        if (name === undefined || ready?.status !== "False" || !ready.message?.includes("cni plugin not initialized"))
          continue;
        const at = new Date().toISOString();
        await core.patchNodeStatus(
          {
            name,
            body: {
              status: {
                conditions: [
                  {
                    type: "Ready",
                    status: "True",
                    reason: "KubeletReady",
                    message: "kubelet is posting ready status",
                    lastHeartbeatTime: at,
                    lastTransitionTime: at,
                  },
                ],
              },
            },
          },
          strategicPatch,
        );
      }
    } catch {
      return false;
    }
    return true;
  };
  const reconciler = import("@nodekit/testenv/reconcile-on-change").then(({ reconcileOnChange }) =>
    reconcileOnChange({
      watch: clients.then((c) => c.watch),
      paths: WATCHED,
      reconcile,
      ...(options.retryMs === undefined ? {} : { retryMs: options.retryMs }),
    }),
  );
  return () => {
    void reconciler.then((r) => r.stop());
  };
}
