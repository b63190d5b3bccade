import type { Cluster, NodePool } from "@nodekit/nvke-api";
import { describe, expect, test } from "vitest";
import { type ClusterDescription, recentTransitions, renderClusterDescription } from "./describe.ts";

const t = (minutesAgo: number) => new Date(Date.UTC(2026, 0, 1, 12, 0) - minutesAgo * 60_000).toISOString();
const now = new Date(Date.UTC(2026, 0, 1, 12, 0));

const cluster: Cluster = {
  id: "11111111-1111-4111-8111-111111111111",
  name: "tenant-a",
  description: "team A",
  provider: "nico",
  clusterReleaseID: "22222222-2222-4222-8222-222222222222",
  clusterReleaseName: "nvke-1-31",
  kubernetesVersion: "v1.31.4",
  controlPlaneConfig: { replicas: 1, nodeNamePrefix: "tenant-a-cp" },
  network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12", nodeCIDRMaskSize: 24 },
  nico: { instanceType: "mock.small" },
  labels: { team: "a", env: "lab" },
  status: {
    phase: "Ready",
    controlPlaneReady: true,
    controlPlaneEndpoint: "https://tenant-a.example:6443",
    kubeconfigSecret: { namespace: "nvke-clusters", name: "tenant-a-kubeconfig" },
    conditions: [
      { type: "Ready", status: "True", reason: "Ready", lastTransitionTime: t(50) },
      { type: "ControlPlaneReady", status: "True", reason: "Ready", lastTransitionTime: t(50) },
      {
        type: "WorkersReady",
        status: "False",
        reason: "NodesProvisioning",
        message: 'node pool "workers": 1 of 2 nodes running',
        lastTransitionTime: t(2),
      },
    ],
  },
  createdAt: t(55),
  updatedAt: t(50),
};

function pool(
  name: string,
  role: NodePool["role"],
  nodes: NodePool["status"]["nodes"],
  extra: Partial<NodePool> = {},
): NodePool {
  const running = nodes.filter((node) => node.state === "Running").length;
  return {
    id: `33333333-3333-4333-8333-${name
      .padEnd(12, "0")
      .slice(0, 12)
      .replace(/[^0-9a-f]/g, "0")}`,
    name,
    clusterID: cluster.id,
    clusterName: cluster.name,
    nodeNamePrefix: name,
    desiredNodeCount: nodes.length,
    role,
    labels: {},
    taints: [],
    status: {
      phase: running === nodes.length ? "Ready" : "Scaling",
      readyNodes: running,
      pendingNodes: nodes.length - running,
      nodes,
    },
    createdAt: t(40),
    updatedAt: t(2),
    ...extra,
  };
}

const description: ClusterDescription = {
  cluster,
  pools: [
    pool("control-plane", "control-plane", [{ name: "tenant-a-cp-0", state: "Running", lastTransitionTime: t(50) }]),
    pool(
      "workers",
      "worker",
      [
        { name: "workers-0", state: "Running", lastTransitionTime: t(30) },
        { name: "workers-1", state: "Provisioning", lastTransitionTime: t(1) },
      ],
      { nodePoolReleaseName: "nvke-workers-1-31" },
    ),
  ],
  nodePoolReleases: [
    {
      id: "44444444-4444-4444-8444-444444444444",
      name: "nvke-workers-1-31",
      version: "1.0.0",
      kubernetesVersion: "v1.31.4",
      machineImageName: "img",
      machineImageID: "55555555-5555-4555-8555-555555555555",
      components: [],
      labels: {},
      createdAt: t(60),
    },
  ],
};

describe("describe cluster", () => {
  test("shows the facts, the conditions, the tree of pools and nodes, the releases and the transitions", () => {
    expect(renderClusterDescription(description, now)).toMatchInlineSnapshot(`
      "Name:         tenant-a
      ID:           11111111-1111-4111-8111-111111111111
      Description:  team A
      Provider:     nico: NICo instance type mock.small
      Phase:        Ready
      Kubernetes:   v1.31.4 (cluster release nvke-1-31)
      Endpoint:     https://tenant-a.example:6443
      Kubeconfig:   Secret nvke-clusters/tenant-a-kubeconfig
      Network:      pods 10.244.0.0/16 (/24 per node), services 10.96.0.0/12
      Labels:       env=lab, team=a
      Created:      55m ago (2026-01-01T11:05:00.000Z)

      Conditions:
        TYPE                STATUS   REASON              SINCE   MESSAGE
        Ready               True     Ready               50m
        ControlPlaneReady   True     Ready               50m
        WorkersReady        False    NodesProvisioning   2m      node pool "workers": 1 of 2 nodes running

      Topology:
        NAME                         READY   STATE          SINCE   RELEASE / MESSAGE
        Cluster/tenant-a             True    Ready          50m
        ├─ControlPlane
        │ └─NodePool/control-plane   1/1     Ready          2m      nvke-1-31 (v1.31.4)
        │   └─Node/tenant-a-cp-0     True    Running        50m
        └─Workers
          └─NodePool/workers         1/2     Scaling        2m      nvke-workers-1-31 (v1.31.4)
            ├─Node/workers-0         True    Running        30m
            └─Node/workers-1         False   Provisioning   60s

      Releases:
        ClusterRelease/nvke-1-31            <not found>
        NodePoolRelease/nvke-workers-1-31   1.0.0         Kubernetes v1.31.4   machine image img

      Recent transitions:
        AGE   OBJECT                   TRANSITION
        60s   Node/workers-1           Provisioning
        2m    Cluster/tenant-a         WorkersReady False (NodesProvisioning)
        30m   Node/workers-0           Running
        40m   NodePool/control-plane   created
        40m   NodePool/workers         created
        50m   Cluster/tenant-a         Ready True (Ready)
        50m   Cluster/tenant-a         ControlPlaneReady True (Ready)
        50m   Node/tenant-a-cp-0       Running
        55m   Cluster/tenant-a         created
      "
    `);
  });

  test("a controller without conditions, and a cluster without workers, still describe", () => {
    const bare = {
      cluster: { ...cluster, status: { phase: "Provisioning" as const, controlPlaneReady: false } },
      pools: [],
      nodePoolReleases: [],
    };
    const text = renderClusterDescription(bare, now);
    expect(text).toContain("Conditions:\n  <none> (this controller reports no conditions)\n");
    expect(text).toMatch(/\n {2}└─Workers +<none>\n/);
    expect(text).toContain("Kubeconfig:   <none> (written once the cluster is Ready)");
  });

  test("keeps the ten newest transitions", () => {
    const many = {
      ...description,
      pools: [
        pool(
          "big",
          "worker",
          Array.from({ length: 20 }, (_, i) => ({
            name: `big-${i}`,
            state: "Running" as const,
            lastTransitionTime: t(i),
          })),
        ),
      ],
    };
    const transitions = recentTransitions(many);
    expect(transitions).toHaveLength(10);
    expect(transitions[0]).toEqual({ at: t(0), object: "Node/big-0", what: "Running" });
  });
});
