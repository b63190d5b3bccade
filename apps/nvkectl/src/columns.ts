import type { Column, View } from "@nodekit/cli-kit";
import type { Cluster, ClusterRelease, MachineImage, NodePool, NodePoolRelease } from "@nodekit/nvke-api";
import { age } from "./services/time.ts";

// The table columns of each kind; `wide` ones show with -o wide only. A kind's view adds
// what -o name (kind/name) and --show-labels read.

function clusterColumns(now: () => Date): Column<Cluster>[] {
  return [
    { header: "name", value: (c) => c.name },
    { header: "id", value: (c) => c.id },
    { header: "provider", value: (c) => c.provider },
    { header: "version", value: (c) => c.kubernetesVersion },
    { header: "phase", value: (c) => c.status.phase },
    { header: "age", value: (c) => age(c.createdAt, now()) },
    { header: "release", value: (c) => c.clusterReleaseName, wide: true },
    { header: "control plane", value: (c) => c.controlPlaneConfig.replicas, wide: true },
    { header: "endpoint", value: (c) => c.status.controlPlaneEndpoint, wide: true },
    { header: "message", value: (c) => c.status.message, wide: true },
  ];
}

function nodePoolColumns(now: () => Date): Column<NodePool>[] {
  return [
    { header: "name", value: (p) => p.name },
    { header: "id", value: (p) => p.id },
    { header: "role", value: (p) => p.role },
    { header: "desired", value: (p) => p.desiredNodeCount },
    { header: "ready", value: (p) => p.status.readyNodes },
    { header: "pending", value: (p) => p.status.pendingNodes },
    { header: "phase", value: (p) => p.status.phase },
    { header: "age", value: (p) => age(p.createdAt, now()) },
    { header: "cluster", value: (p) => p.clusterName, wide: true },
    { header: "node type", value: (p) => p.nico?.instanceType ?? p.infra?.machineTemplate.kind, wide: true },
    { header: "prefix", value: (p) => p.nodeNamePrefix, wide: true },
    { header: "release", value: (p) => p.nodePoolReleaseName, wide: true },
    { header: "message", value: (p) => p.status.message, wide: true },
  ];
}

function machineImageColumns(now: () => Date): Column<MachineImage>[] {
  return [
    { header: "name", value: (m) => m.name },
    { header: "version", value: (m) => m.version },
    { header: "kubernetes", value: (m) => m.kubernetesVersion },
    { header: "os", value: (m) => `${m.os.distribution} ${m.os.version}` },
    { header: "arch", value: (m) => m.architecture },
    { header: "age", value: (m) => age(m.createdAt, now()) },
    { header: "id", value: (m) => m.id, wide: true },
    { header: "image", value: (m) => m.image, wide: true },
  ];
}

/** What both kinds of release show first; the ID with -o wide only. */
function releaseColumns(now: () => Date): Column<ClusterRelease | NodePoolRelease>[] {
  return [
    { header: "name", value: (r) => r.name },
    { header: "version", value: (r) => r.version },
    { header: "kubernetes", value: (r) => r.kubernetesVersion },
    { header: "machine image", value: (r) => r.machineImageName },
    { header: "age", value: (r) => age(r.createdAt, now()) },
    { header: "id", value: (r) => r.id, wide: true },
  ];
}

function clusterReleaseColumns(now: () => Date): Column<ClusterRelease>[] {
  return [
    ...releaseColumns(now),
    { header: "components", value: (r) => r.components.length, wide: true },
    { header: "charts", value: (r) => r.charts.length, wide: true },
  ];
}

function nodePoolReleaseColumns(now: () => Date): Column<NodePoolRelease>[] {
  return [
    ...releaseColumns(now),
    { header: "cluster release", value: (r) => r.clusterReleaseName, wide: true },
    { header: "components", value: (r) => r.components.length, wide: true },
  ];
}

type Named = { name: string; labels?: Record<string, string> };
const named = <T extends Named>(kind: string, columns: Column<T>[]): View<T> => ({
  kind,
  columns,
  name: (row) => row.name,
  labels: (row) => row.labels,
});

/**
 * A kind's view. AGE is read from `now` when each row is printed, so the rows `-w` prints
 * as changes arrive carry the age at that moment, as kubectl's do.
 */
export const clusterView = (now: () => Date = () => new Date()): View<Cluster> => named("cluster", clusterColumns(now));
export const nodePoolView = (now: () => Date = () => new Date()): View<NodePool> =>
  named("nodepool", nodePoolColumns(now));
export const machineImageView = (now: () => Date = () => new Date()): View<MachineImage> =>
  named("machineimage", machineImageColumns(now));
export const clusterReleaseView = (now: () => Date = () => new Date()): View<ClusterRelease> =>
  named("clusterrelease", clusterReleaseColumns(now));
export const nodePoolReleaseView = (now: () => Date = () => new Date()): View<NodePoolRelease> =>
  named("nodepoolrelease", nodePoolReleaseColumns(now));
