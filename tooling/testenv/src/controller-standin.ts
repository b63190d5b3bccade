import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Deployment,
  type V1Job,
  type V1ReplicaSet,
  Watch,
} from "@kubernetes/client-node";
import { keepConnections } from "@nodekit/kube-connections";
import { reconcileOnChange } from "./reconcile-on-change.ts";

// A test-only stand-in for kube-controller-manager (and a kubelet that starts every pod at
// once), for `helm --wait`, helm hooks, `clusterctl init --wait-providers` and
// `kubectl rollout status` against the test control plane, which runs no controller
// manager. It does what those controllers do to the API and nothing more: a Deployment
// gets its owned ReplicaSet and both get a ready status; a Job completes; a Terminating
// namespace is finalized. It never stands in for helm, clusterctl or the product.

export interface ControllerStandIn {
  /** Stops watching; resolves when the last pass has finished. */
  stop(): Promise<void>;
  /** Runs one pass now (tests that want a deterministic step). */
  reconcile(): Promise<void>;
}

const hashOf = (text: string) => {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
  return hash.toString(16).slice(0, 8).padStart(8, "0");
};

const conflictOrGone = (error: unknown) => {
  const code = (error as { code?: number }).code;
  if (code === 404 || code === 409) return;
  throw error;
};

async function reconcileDeployment(
  apps: AppsV1Api,
  deployment: V1Deployment,
  replicaSets: ReadonlyMap<string, V1ReplicaSet>,
): Promise<void> {
  const { metadata, spec } = deployment;
  if (metadata?.name === undefined || metadata.namespace === undefined || spec === undefined) return;
  const replicas = spec.replicas ?? 1;
  const generation = metadata.generation ?? 1;
  const status = deployment.status ?? {};
  const hash = hashOf(JSON.stringify(spec.template));
  const rsName = `${metadata.name}-${hash}`;
  const namespace = metadata.namespace;
  const ready =
    status.observedGeneration === generation &&
    status.replicas === replicas &&
    status.updatedReplicas === replicas &&
    status.availableReplicas === replicas &&
    (status.conditions ?? []).some((c) => c.type === "Available" && c.status === "True");
  let rs = replicaSets.get(`${namespace}/${rsName}`);
  if (ready && rs?.status?.readyReplicas === replicas) return;
  if (rs === undefined) {
    const template = structuredClone(spec.template);
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, "pod-template-hash": hash },
    };
    rs = await apps
      .createNamespacedReplicaSet({
        namespace,
        body: {
          metadata: {
            name: rsName,
            namespace,
            labels: { ...spec.selector.matchLabels, "pod-template-hash": hash },
            annotations: { "deployment.kubernetes.io/revision": String(generation) },
            ownerReferences: [
              {
                apiVersion: "apps/v1",
                kind: "Deployment",
                name: metadata.name,
                uid: metadata.uid ?? "",
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
          spec: {
            replicas,
            selector: { matchLabels: { ...spec.selector.matchLabels, "pod-template-hash": hash } },
            template,
          },
        },
      })
      .catch((error) => {
        conflictOrGone(error);
        return undefined;
      });
    if (rs === undefined) return;
  }
  if (rs.metadata?.name && rs.status?.readyReplicas !== replicas) {
    await apps
      .replaceNamespacedReplicaSetStatus({
        name: rs.metadata.name,
        namespace,
        body: {
          ...rs,
          status: {
            replicas,
            fullyLabeledReplicas: replicas,
            readyReplicas: replicas,
            availableReplicas: replicas,
            observedGeneration: rs.metadata.generation ?? 1,
          },
        },
      })
      .catch(conflictOrGone);
  }
  const now = new Date();
  await apps
    .replaceNamespacedDeploymentStatus({
      name: metadata.name,
      namespace,
      body: {
        ...deployment,
        status: {
          observedGeneration: generation,
          replicas,
          updatedReplicas: replicas,
          readyReplicas: replicas,
          availableReplicas: replicas,
          conditions: [
            {
              type: "Available",
              status: "True",
              reason: "MinimumReplicasAvailable",
              message: "Deployment has minimum availability.",
              lastUpdateTime: now,
              lastTransitionTime: now,
            },
            {
              type: "Progressing",
              status: "True",
              reason: "NewReplicaSetAvailable",
              message: `ReplicaSet "${rsName}" has successfully progressed.`,
              lastUpdateTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
    })
    .catch(conflictOrGone);
}

async function reconcileJob(batch: BatchV1Api, job: V1Job): Promise<void> {
  const { metadata } = job;
  if (metadata?.name === undefined || metadata.namespace === undefined) return;
  if ((job.status?.conditions ?? []).some((c) => c.type === "Complete" && c.status === "True")) return;
  const now = new Date();
  const completions = job.spec?.completions ?? 1;
  await batch
    .replaceNamespacedJobStatus({
      name: metadata.name,
      namespace: metadata.namespace,
      body: {
        ...job,
        status: {
          startTime: job.status?.startTime ?? now,
          completionTime: now,
          succeeded: completions,
          active: 0,
          ready: 0,
          terminating: 0,
          uncountedTerminatedPods: {},
          conditions: [
            { type: "SuccessCriteriaMet", status: "True", lastProbeTime: now, lastTransitionTime: now },
            { type: "Complete", status: "True", lastProbeTime: now, lastTransitionTime: now },
          ],
        },
      },
    })
    .catch(conflictOrGone);
}

/** What the stand-in follows: a change to any of them is reconciled at once. */
const WATCHED = ["/apis/apps/v1/deployments", "/apis/apps/v1/replicasets", "/apis/batch/v1/jobs", "/api/v1/namespaces"];

/**
 * Starts the stand-in against the cluster of `kubeconfigPath` (an admin). It reconciles once,
 * then whenever a Deployment, ReplicaSet, Job or Namespace changes (watches, as the
 * controllers' informers); a failed pass or a broken watch is tried again after `retryMs`.
 */
export function startControllerStandIn(kubeconfigPath: string, options: { retryMs?: number } = {}): ControllerStandIn {
  // One connection per cluster, not a TLS handshake per request (what nvkectl's clients do too).
  const kc = keepConnections(new KubeConfig());
  kc.loadFromFile(kubeconfigPath);
  const apps = kc.makeApiClient(AppsV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const reconcile = async () => {
    const [deployments, replicaSets, jobs, namespaces] = await Promise.all([
      apps.listDeploymentForAllNamespaces(),
      apps.listReplicaSetForAllNamespaces(),
      batch.listJobForAllNamespaces(),
      core.listNamespace(),
    ]);
    const byName = new Map(
      replicaSets.items.map((rs) => [`${rs.metadata?.namespace ?? ""}/${rs.metadata?.name ?? ""}`, rs] as const),
    );
    await Promise.all(deployments.items.map((deployment) => reconcileDeployment(apps, deployment, byName)));
    await Promise.all(jobs.items.map((job) => reconcileJob(batch, job)));
    // The namespace controller's last step, without deleting the contents: enough for a
    // namespace that is deleted and created again (clusterctl's cert-manager-test).
    await Promise.all(
      namespaces.items
        .filter((ns) => ns.metadata?.deletionTimestamp !== undefined && ns.metadata.name !== undefined)
        .map((ns) =>
          core
            .replaceNamespaceFinalize({
              name: ns.metadata?.name ?? "",
              body: { ...ns, spec: { finalizers: [] } },
            })
            .catch(conflictOrGone),
        ),
    );
    return true;
  };
  return reconcileOnChange({
    watch: new Watch(kc),
    paths: WATCHED,
    reconcile,
    ...(options.retryMs === undefined ? {} : { retryMs: options.retryMs }),
  });
}
