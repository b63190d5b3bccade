// What the sandbox puts on its site cluster, as data: the objects the NVKE controller stack
// would install (auth ConfigMap, the nke-client ServiceAccount, a provider), and the RBAC a
// site admin grants an operator — the same grants docs/auth.md lists as kubectl commands
// (a test holds the two to each other).

import { looseCrd } from "@nodekit/testenv/capi-repository";

/** The audience the sandbox's controller expects in bearer tokens. */
export const SANDBOX_AUDIENCE = "nvke-sandbox";
/** The operator identity: a client certificate with this CN and no groups. */
export const OPERATOR_USER = "operator";
/**
 * The NICo API key the sandbox's guides install with (`NVKE_NICO_API_KEY`): the only key the
 * sandbox's stand-in for the NICo provider's credential check accepts. Not a secret.
 */
export const SANDBOX_NICO_API_KEY = "sandbox-not-a-secret";
/** The nvkectl site name the sandbox configures. */
export const SANDBOX_SITE = "sandbox";

/**
 * One Role (namespace given) or ClusterRole, and its binding of the same name, in the
 * terms of `kubectl create role|clusterrole NAME --verb … --resource … --resource-name …`.
 */
export interface Grant {
  name: string;
  /** Absent: a ClusterRole and ClusterRoleBinding. */
  namespace?: string;
  verbs: readonly string[];
  /** As kubectl's --resource takes them: `configmaps`, `serviceaccounts/token`, `deployments.apps`. */
  resources: readonly string[];
  resourceNames?: readonly string[];
  /** Which commands need it (for people). */
  neededBy: string;
}

const INFRA = "infrastructure.cluster.x-k8s.io";

/**
 * Exactly what an operator needs, and no more: the controller API commands (the audience
 * and the token), `get kubeconfig` (the tenant kubeconfig Secrets) and `get providers`
 * (the providers' CRDs, controllers, credentials Secret — by name, never its data — and
 * identities).
 */
export const OPERATOR_GRANTS: readonly Grant[] = [
  {
    name: "nvke-auth-config-reader",
    namespace: "nke-controller",
    verbs: ["get"],
    resources: ["configmaps"],
    resourceNames: ["nvke-auth-config", "nke-auth-config"],
    neededBy: "every controller API command: the audience",
  },
  {
    name: "nke-client-token-creator",
    namespace: "nke-clients",
    verbs: ["create"],
    resources: ["serviceaccounts/token"],
    resourceNames: ["nke-client"],
    neededBy: "every controller API command: the token",
  },
  {
    name: "nvke-kubeconfig-reader",
    namespace: "nvke-clusters",
    verbs: ["get"],
    resources: ["secrets"],
    neededBy: "get kubeconfig",
  },
  {
    name: "nvke-provider-crd-reader",
    verbs: ["get"],
    resources: ["customresourcedefinitions.apiextensions.k8s.io"],
    resourceNames: [
      `nicoclusters.${INFRA}`,
      `nicomachines.${INFRA}`,
      `nicomachinetemplates.${INFRA}`,
      `nicoidentities.${INFRA}`,
      `dockerclusters.${INFRA}`,
      `dockerclustertemplates.${INFRA}`,
      `dockermachines.${INFRA}`,
      `dockermachinetemplates.${INFRA}`,
    ],
    neededBy: "get providers",
  },
  {
    name: "nvke-provider-reader",
    namespace: "nico-system",
    verbs: ["get"],
    resources: ["deployments.apps", "secrets"],
    resourceNames: ["nico-controller-manager", "nico-credentials"],
    neededBy: "get providers",
  },
  {
    name: "nvke-provider-reader",
    namespace: "capd-system",
    verbs: ["get"],
    resources: ["deployments.apps"],
    resourceNames: ["capd-controller-manager"],
    neededBy: "get providers",
  },
];

/**
 * Grants for a provider that is installed: `kubectl create clusterrole` checks that the
 * resource exists, and `get providers` lists identities only once their CRD is Established.
 * The sandbox grants them as objects from the start (no such check), for its operator to read
 * the NicoIdentity an install creates; docs/auth.md shows them apart.
 */
export const INSTALLED_PROVIDER_GRANTS: readonly Grant[] = [
  {
    name: "nvke-provider-identity-reader",
    verbs: ["list"],
    resources: [`nicoidentities.${INFRA}`],
    neededBy: "get providers, where the nico provider is installed",
  },
];

/** A subject as kubectl's create rolebinding takes it. */
export type Subject = { user: string } | { group: string } | { serviceAccount: { namespace: string; name: string } };

function subjectFlag(subject: Subject): string {
  if ("user" in subject) return `--user=${subject.user}`;
  if ("group" in subject) return `--group=${subject.group}`;
  return `--serviceaccount=${subject.serviceAccount.namespace}:${subject.serviceAccount.name}`;
}

function subjectName(subject: Subject): string {
  if ("user" in subject) return subject.user;
  if ("group" in subject) return subject.group;
  return `${subject.serviceAccount.namespace}-${subject.serviceAccount.name}`;
}

/** A role is shared by every operator; each gets a binding of their own, named after them. */
const bindingName = (grant: Grant, subject: Subject) =>
  `${grant.name}-${subjectName(subject)
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")}`.slice(0, 253);

/**
 * The kubectl commands (argv after `kubectl`) that make these grants, as docs/auth.md shows
 * them: each role with `create … --dry-run=client -o yaml` (piped to `kubectl apply -f -`, so
 * that creating it again for the next operator is harmless), and the subject's binding.
 */
export function grantCommands(grants: readonly Grant[], subject: Subject): string[][] {
  return grants.flatMap((grant) => {
    const scope = grant.namespace === undefined ? [] : ["-n", grant.namespace];
    const kind = grant.namespace === undefined ? "clusterrole" : "role";
    return [
      [
        "create",
        kind,
        grant.name,
        ...scope,
        `--verb=${grant.verbs.join(",")}`,
        ...grant.resources.map((resource) => `--resource=${resource}`),
        ...(grant.resourceNames ?? []).map((name) => `--resource-name=${name}`),
        "--dry-run=client",
        "-o",
        "yaml",
      ],
      [
        "create",
        `${kind}binding`,
        bindingName(grant, subject),
        ...scope,
        `--${kind}=${grant.name}`,
        subjectFlag(subject),
      ],
    ];
  });
}

/** `deployments.apps` → group `apps`, `serviceaccounts/token` → the core group. */
function ruleResource(resource: string): { group: string; resource: string } {
  const [plural = "", ...group] = resource.split(".");
  return { group: group.join("."), resource: plural };
}

function subjectObject(subject: Subject): object {
  if ("user" in subject) return { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: subject.user };
  if ("group" in subject) return { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: subject.group };
  return { kind: "ServiceAccount", ...subject.serviceAccount };
}

/** The Roles, ClusterRoles and bindings these grants are, as objects to apply. */
export function grantObjects(grants: readonly Grant[], subject: Subject): object[] {
  return grants.flatMap((grant) => {
    const cluster = grant.namespace === undefined;
    const metadata = { name: grant.name, ...(cluster ? {} : { namespace: grant.namespace }), labels: SANDBOX_LABELS };
    const byGroup = new Map<string, string[]>();
    for (const resource of grant.resources) {
      const { group, resource: plural } = ruleResource(resource);
      byGroup.set(group, [...(byGroup.get(group) ?? []), plural]);
    }
    const rules = [...byGroup].map(([group, resources]) => ({
      apiGroups: [group],
      resources,
      verbs: [...grant.verbs],
      ...(grant.resourceNames === undefined ? {} : { resourceNames: [...grant.resourceNames] }),
    }));
    const kind = cluster ? "ClusterRole" : "Role";
    return [
      { apiVersion: "rbac.authorization.k8s.io/v1", kind, metadata, rules },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: `${kind}Binding`,
        metadata: { ...metadata, name: bindingName(grant, subject) },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: grant.name },
        subjects: [subjectObject(subject)],
      },
    ];
  });
}

const SANDBOX_LABELS = { "app.kubernetes.io/managed-by": "nodekit-sandbox" };

const namespace = (name: string) => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name, labels: SANDBOX_LABELS },
});

/** Auth on, as the controller chart sets it up: the auth ConfigMap and the ServiceAccount tokens are minted for. */
export function authObjects(audience: string): object[] {
  return [
    namespace("nke-controller"),
    namespace("nke-clients"),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      // As the NVKE controller chart leaves it (helm's ownership metadata): an install on the
      // sandbox (`nvkectl install --release`) adopts it and sets the chart's audience.
      metadata: {
        name: "nvke-auth-config",
        namespace: "nke-controller",
        labels: { "app.kubernetes.io/managed-by": "Helm" },
        annotations: {
          "meta.helm.sh/release-name": "nvke-controller",
          "meta.helm.sh/release-namespace": "nke-controller",
        },
      },
      data: { audience },
    },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "nke-client", namespace: "nke-clients", labels: SANDBOX_LABELS },
    },
  ];
}

/** The namespaces the grants live in (a Role needs its namespace to exist). */
export function grantNamespaces(grants: readonly Grant[]): object[] {
  const names = [...new Set(grants.flatMap((grant) => (grant.namespace === undefined ? [] : [grant.namespace])))];
  return names.map(namespace);
}

const crd = (plural: string, kind: string) => looseCrd(plural, kind, INFRA, "v1beta1", { labels: SANDBOX_LABELS });

/** CAPD's controller, as Cluster API's Docker provider installs it (the sandbox runs no kubelet, so no Pod). */
export const CAPD_CONTROLLER = { namespace: "capd-system", name: "capd-controller-manager" } as const;

/**
 * The Docker provider (CAPD) as `get providers` checks it: its CRDs and its controller
 * Deployment. The sandbox's clusters are on `capd`; the NVKE controller emulator plays
 * the provider's part, so no controller runs — `up` marks the Deployment Available
 * through its status subresource, as the Deployment controller would.
 */
export function capdObjects(): object[] {
  return [
    crd("dockerclusters", "DockerCluster"),
    crd("dockerclustertemplates", "DockerClusterTemplate"),
    crd("dockermachines", "DockerMachine"),
    crd("dockermachinetemplates", "DockerMachineTemplate"),
    namespace(CAPD_CONTROLLER.namespace),
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        ...CAPD_CONTROLLER,
        labels: SANDBOX_LABELS,
        annotations: { "nodekit.dev/sandbox": "the NVKE controller emulator plays this provider; no Pod runs" },
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { "cluster.x-k8s.io/provider": "infrastructure-docker" } },
        template: {
          metadata: { labels: { "cluster.x-k8s.io/provider": "infrastructure-docker" } },
          spec: { containers: [{ name: "manager", image: "registry.k8s.io/cluster-api/capd-manager:v1.11.7" }] },
        },
      },
    },
  ];
}

/** The site cluster's one node (no kubelet runs): `nvkectl install` reads the stack's architecture from it. */
const SITE_NODE = "sandbox-node-1";

/** Kubernetes' name for this machine's architecture (`kubernetes.io/arch`). */
function nodeArchitecture(arch: string = process.arch): string {
  return arch === "x64" ? "amd64" : arch;
}

/**
 * The site cluster's node, as a kind site cluster's node registers itself: its name and its
 * well-known labels. No kubelet runs, so it has no status; nothing is scheduled on it.
 */
export function siteNodeObjects(arch = nodeArchitecture()): object[] {
  return [
    {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: SITE_NODE,
        labels: {
          ...SANDBOX_LABELS,
          "kubernetes.io/arch": arch,
          "kubernetes.io/os": "linux",
          "kubernetes.io/hostname": SITE_NODE,
        },
        annotations: { "nodekit.dev/sandbox": "no kubelet runs: the sandbox registers this node for what reads nodes" },
      },
    },
  ];
}

/** The status the Deployment controller would write once its one replica is available. */
export const AVAILABLE_STATUS = {
  status: {
    observedGeneration: 1,
    replicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
    updatedReplicas: 1,
    conditions: [
      { type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "emulated by the sandbox" },
    ],
  },
};
