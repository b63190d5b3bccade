import type { AppsV1Api, ConfigurationOptions, CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";

// A stand-in for Calico's tigera operator and calico-node, for apps/nr's tests and the
// sandbox's agent cluster: nothing runs pods there (a kube-apiserver with no kubelet). It
// does to the API what they would, and no more, so that nr's Calico phase and the k3s
// stand-in's NotReady node (k3s-install.ts) meet the same signals as on a VM.

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
}

/** The API clients for the kubeconfig (client-node is loaded on the first tick, in this process: no kubectl per poll). */
async function clientsFor(kubeconfig: string): Promise<Clients> {
  const k8s = await import("@kubernetes/client-node");
  const config = new k8s.KubeConfig();
  config.loadFromFile(kubeconfig);
  return {
    core: config.makeApiClient(k8s.CoreV1Api),
    custom: config.makeApiClient(k8s.CustomObjectsApi),
    apps: config.makeApiClient(k8s.AppsV1Api),
    mergePatch: k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    strategicPatch: k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
  };
}

export interface CalicoOperatorOptions {
  /** How often it reconciles (default 300 ms, as a test wants it; the sandbox polls less often). */
  intervalMs?: number;
}

/**
 * A stand-in for Calico's tigera operator and calico-node, polling every `intervalMs`.
 * TigeraStatus `calico` is Available while the Installation `default` exists and the
 * operator's Deployment `tigera-operator/tigera-operator` is there (Calico's documented
 * readiness signal, docs.tigera.io "Install Calico" / the k3s quickstart's `kubectl wait …
 * tigerastatus`); without the operator it is not. While Calico is Available, a node the k3s
 * stand-in registered NotReady for want of a CNI ("cni plugin not initialized",
 * k3s-io/k3s#12583) is marked Ready, as the kubelet reports once calico-node has written the
 * CNI config. Stops when the returned function is called.
 */
export function calicoOperator(kubeconfig: string, options: CalicoOperatorOptions = {}): () => void {
  let stopped = false;
  let busy = false;
  let clients: Promise<Clients> | undefined;
  const tick = async () => {
    if (stopped || busy) return;
    busy = true;
    try {
      clients ??= clientsFor(kubeconfig);
      const { core, custom, apps, mergePatch, strategicPatch } = await clients;
      if (!(await found(custom.getClusterCustomObject({ ...TIGERA, plural: "installations", name: "default" }))))
        return;
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
      if (!available) return;
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
      // The next tick tries again, as a controller's next reconcile would.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), options.intervalMs ?? 300);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
