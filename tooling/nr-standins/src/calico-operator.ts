import { execFile } from "node:child_process";
import { promisify } from "node:util";

// A stand-in for Calico's tigera operator and calico-node, for apps/nr's tests and the
// sandbox's agent cluster: nothing runs pods there (a kube-apiserver with no kubelet). It
// does to the API what they would, and no more, so that nr's Calico phase and the k3s
// stand-in's NotReady node (k3s-install.ts) meet the same signals as on a VM.

const execFileAsync = promisify(execFile);

async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = execFileAsync("kubectl", ["--kubeconfig", kubeconfig, ...args], { encoding: "utf8", timeout: 60_000 });
  if (input !== undefined) child.child.stdin?.end(input);
  const { stdout } = await child;
  return stdout;
}

function conditionStatus(json: string, type: string): string | undefined {
  const parsed = JSON.parse(json) as { status?: { conditions?: Array<{ type: string; status: string }> } };
  return parsed.status?.conditions?.find((c) => c.type === type)?.status;
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
  const exists = (args: string[]) =>
    kubectl(kubeconfig, ["get", ...args, "-o", "name"]).then(
      () => true,
      () => false,
    );
  const tick = async () => {
    if (stopped || busy) return;
    busy = true;
    try {
      if (!(await exists(["installations.operator.tigera.io/default"]))) return;
      const available = await exists(["deployment/tigera-operator", "-n", "tigera-operator"]);
      const current = await kubectl(kubeconfig, ["get", "tigerastatus/calico", "-o", "json"]).catch(() => undefined);
      const was = current === undefined ? undefined : conditionStatus(current, "Available");
      if (current === undefined) {
        await kubectl(
          kubeconfig,
          ["apply", "-f", "-"],
          JSON.stringify({
            apiVersion: "operator.tigera.io/v1",
            kind: "TigeraStatus",
            metadata: { name: "calico" },
            spec: {},
          }),
        );
      }
      if (was !== (available ? "True" : "False")) {
        const at = new Date().toISOString();
        await kubectl(kubeconfig, [
          "patch",
          "tigerastatus/calico",
          "--subresource=status",
          "--type=merge",
          "-p",
          JSON.stringify({
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
          }),
        ]);
      }
      if (!available) return;
      const nodes = JSON.parse(await kubectl(kubeconfig, ["get", "nodes", "-o", "json"])) as {
        items: Array<{
          metadata: { name: string };
          status?: { conditions?: Array<{ type: string; status: string; message?: string }> };
        }>;
      };
      for (const node of nodes.items) {
        const ready = node.status?.conditions?.find((c) => c.type === "Ready");
        if (ready?.status !== "False" || !ready.message?.includes("cni plugin not initialized")) continue;
        const at = new Date().toISOString();
        await kubectl(kubeconfig, [
          "patch",
          `node/${node.metadata.name}`,
          "--subresource=status",
          "--type=strategic",
          "-p",
          JSON.stringify({
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
          }),
        ]);
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
