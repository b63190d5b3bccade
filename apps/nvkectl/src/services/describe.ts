import { formatTable } from "@nodekit/cli-kit";
import { ExitCode, UserError } from "@nodekit/errors";
import type { Cluster, ClusterRelease, NodePool, NodePoolRelease, NvkeClient } from "@nodekit/nvke-api";
import { forEachPage } from "./paging.ts";
import { age } from "./time.ts";

/** Everything `describe cluster` shows, as read from the controller. */
export interface ClusterDescription {
  cluster: Cluster;
  pools: NodePool[];
  /** The control plane's release; undefined when the controller no longer has it. */
  clusterRelease?: ClusterRelease;
  /** The releases the pools name. */
  nodePoolReleases: NodePoolRelease[];
}

/** Reads the cluster, its node pools and the releases they run: a few requests, all reads. */
export async function readClusterDescription(options: {
  client: NvkeClient;
  name: string;
}): Promise<ClusterDescription> {
  const { client } = options;
  const cluster = await client.getClusterByName(options.name);
  const pools: NodePool[] = [];
  await forEachPage(
    (page) => client.listNodePoolsPage({ clusterID: cluster.id, ...page }),
    (items) => {
      pools.push(...items);
    },
  );
  const wanted = new Set(pools.map((pool) => pool.nodePoolReleaseName).filter((name) => name !== undefined));
  const nodePoolReleases: NodePoolRelease[] = [];
  if (wanted.size > 0) {
    await forEachPage(
      (page) => client.listNodePoolReleasesPage(page),
      (items) => {
        nodePoolReleases.push(...items.filter((release) => wanted.has(release.name)));
      },
    );
  }
  let clusterRelease: ClusterRelease | undefined;
  try {
    clusterRelease = await client.getClusterRelease(cluster.clusterReleaseID);
  } catch (error) {
    if (!(error instanceof UserError && error.exitCode === ExitCode.NotFound)) throw error;
  }
  return { cluster, pools, ...(clusterRelease === undefined ? {} : { clusterRelease }), nodePoolReleases };
}

const indent = (text: string, by = "  ") =>
  text
    .trimEnd()
    .split("\n")
    .map((line) => `${by}${line}`)
    .join("\n");

const none = (text: string | undefined) => (text === undefined || text === "" ? "<none>" : text);

/**
 * The cluster as clusterctl's `describe cluster` and kubectl's `describe` show one: its
 * facts, its conditions, its tree (control plane and node pools, each with its nodes and
 * their states), the releases, and the most recent transitions. Pure: `now` is given.
 */
export function renderClusterDescription(description: ClusterDescription, now: Date): string {
  const { cluster } = description;
  const labels = Object.keys(cluster.labels)
    .sort()
    .map((key) => `${key}=${cluster.labels[key]}`)
    .join(", ");
  const machines =
    cluster.nico !== undefined
      ? `NICo instance type ${cluster.nico.instanceType}`
      : `${cluster.infra?.machineTemplate.kind ?? "?"} (${cluster.infra?.machineTemplate.apiVersion ?? "?"})`;
  const facts: Array<[string, string]> = [
    ["Name", cluster.name],
    ["ID", cluster.id],
    ["Description", none(cluster.description)],
    ["Provider", `${cluster.provider}: ${machines}`],
    ["Phase", cluster.status.phase],
    ...(cluster.status.message === undefined ? [] : ([["Message", cluster.status.message]] as Array<[string, string]>)),
    ["Kubernetes", `${cluster.kubernetesVersion} (cluster release ${cluster.clusterReleaseName})`],
    ["Endpoint", none(cluster.status.controlPlaneEndpoint)],
    [
      "Kubeconfig",
      cluster.status.kubeconfigSecret === undefined
        ? "<none> (written once the cluster is Ready)"
        : `Secret ${cluster.status.kubeconfigSecret.namespace}/${cluster.status.kubeconfigSecret.name}`,
    ],
    [
      "Network",
      `pods ${cluster.network.podCIDR} (/${cluster.network.nodeCIDRMaskSize} per node), services ${cluster.network.serviceCIDR}`,
    ],
    ["Labels", none(labels)],
    ["Created", `${age(cluster.createdAt, now) ?? "?"} ago (${cluster.createdAt})`],
  ];
  const width = Math.max(...facts.map(([key]) => key.length)) + 3;
  const sections = [facts.map(([key, value]) => `${`${key}:`.padEnd(width)}${value}`).join("\n")];

  const conditions = cluster.status.conditions ?? [];
  sections.push(
    `Conditions:\n${
      conditions.length === 0
        ? "  <none> (this controller reports no conditions)"
        : indent(
            formatTable(
              ["TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"],
              conditions.map((c) => [
                c.type,
                c.status,
                c.reason ?? "",
                age(c.lastTransitionTime, now) ?? "",
                c.message ?? "",
              ]),
            ),
          )
    }`,
  );

  sections.push(
    `Topology:\n${indent(formatTable(["NAME", "READY", "STATE", "SINCE", "RELEASE / MESSAGE"], treeRows(description, now)))}`,
  );

  const releases: string[][] = [];
  const cr = description.clusterRelease;
  releases.push(
    cr === undefined
      ? [`ClusterRelease/${cluster.clusterReleaseName}`, "<not found>", "", ""]
      : [
          `ClusterRelease/${cr.name}`,
          cr.version,
          `Kubernetes ${cr.kubernetesVersion}`,
          `machine image ${cr.machineImageName}`,
        ],
  );
  for (const release of description.nodePoolReleases) {
    releases.push([
      `NodePoolRelease/${release.name}`,
      release.version,
      `Kubernetes ${release.kubernetesVersion}`,
      `machine image ${release.machineImageName}`,
    ]);
  }
  sections.push(
    `Releases:\n${indent(formatTable(["RELEASE", "VERSION", "KUBERNETES", "IMAGE"], releases, { noHeaders: true }))}`,
  );

  const transitions = recentTransitions(description);
  sections.push(
    `Recent transitions:\n${
      transitions.length === 0
        ? "  <none>"
        : indent(
            formatTable(
              ["AGE", "OBJECT", "TRANSITION"],
              transitions.map((t) => [age(t.at, now) ?? "", t.object, t.what]),
            ),
          )
    }`,
  );
  return `${sections.join("\n\n")}\n`;
}

function poolRelease(description: ClusterDescription, pool: NodePool): string {
  if (pool.nodePoolReleaseName === undefined) {
    return pool.role === "control-plane"
      ? `${description.cluster.clusterReleaseName} (${description.cluster.kubernetesVersion})`
      : `cluster's release (${description.cluster.kubernetesVersion})`;
  }
  const release = description.nodePoolReleases.find((r) => r.name === pool.nodePoolReleaseName);
  return `${pool.nodePoolReleaseName} (${release?.kubernetesVersion ?? "not found"})`;
}

/** The tree: the cluster, its control plane and its workers, each pool with its nodes. */
function treeRows(description: ClusterDescription, now: Date): string[][] {
  const { cluster, pools } = description;
  const ready = cluster.status.conditions?.find((c) => c.type === "Ready");
  const rows: string[][] = [
    [
      `Cluster/${cluster.name}`,
      ready?.status ?? (cluster.status.phase === "Ready" ? "True" : "False"),
      cluster.status.phase,
      age(ready?.lastTransitionTime ?? cluster.updatedAt, now) ?? "",
      cluster.status.message ?? "",
    ],
  ];
  const groups = [
    { label: "ControlPlane", pools: pools.filter((pool) => pool.role === "control-plane") },
    { label: "Workers", pools: pools.filter((pool) => pool.role !== "control-plane") },
  ];
  groups.forEach((group, groupIndex) => {
    const lastGroup = groupIndex === groups.length - 1;
    rows.push([`${lastGroup ? "└─" : "├─"}${group.label}`, "", group.pools.length === 0 ? "<none>" : "", "", ""]);
    const stem = lastGroup ? "  " : "│ ";
    group.pools.forEach((pool, poolIndex) => {
      const lastPool = poolIndex === group.pools.length - 1;
      rows.push([
        `${stem}${lastPool ? "└─" : "├─"}NodePool/${pool.name}`,
        `${pool.status.readyNodes}/${pool.desiredNodeCount}`,
        pool.status.phase,
        age(pool.updatedAt, now) ?? "",
        [poolRelease(description, pool), pool.status.message].filter(Boolean).join(": "),
      ]);
      const branch = `${stem}${lastPool ? "  " : "│ "}`;
      pool.status.nodes.forEach((node, nodeIndex) => {
        const lastNode = nodeIndex === pool.status.nodes.length - 1;
        rows.push([
          `${branch}${lastNode ? "└─" : "├─"}Node/${node.name}`,
          node.state === "Running" ? "True" : "False",
          node.state,
          age(node.lastTransitionTime, now) ?? "",
          "",
        ]);
      });
    });
  });
  return rows;
}

interface Transition {
  at: string;
  object: string;
  what: string;
}

/** The newest transitions first: each condition's last change, each node's last state change, the creation. */
export function recentTransitions(description: ClusterDescription, max = 10): Transition[] {
  const { cluster } = description;
  const transitions: Transition[] = [{ at: cluster.createdAt, object: `Cluster/${cluster.name}`, what: "created" }];
  for (const condition of cluster.status.conditions ?? []) {
    transitions.push({
      at: condition.lastTransitionTime,
      object: `Cluster/${cluster.name}`,
      what: `${condition.type} ${condition.status}${condition.reason === undefined ? "" : ` (${condition.reason})`}`,
    });
  }
  for (const pool of description.pools) {
    transitions.push({ at: pool.createdAt, object: `NodePool/${pool.name}`, what: "created" });
    for (const node of pool.status.nodes) {
      if (node.lastTransitionTime !== undefined) {
        transitions.push({ at: node.lastTransitionTime, object: `Node/${node.name}`, what: node.state });
      }
    }
  }
  return transitions
    .filter((t) => !Number.isNaN(Date.parse(t.at)))
    .sort((a, b) => Date.parse(b.at) - Date.parse(a.at))
    .slice(0, max);
}
