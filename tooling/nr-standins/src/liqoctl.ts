import { appendFileSync } from "node:fs";
import { join } from "node:path";
import {
  apply,
  cidrContains,
  DNS1123_LABEL,
  fail,
  getJson,
  isGoDuration,
  type KubeconfigSeen,
  list,
  parseCidr,
  parseFlags,
  patchStatus,
  readKubeconfig,
  record,
  remove,
  resource,
  waitEstablished,
  world,
} from "./world.ts";

// A stand-in for liqoctl v1.0.1 and the Liqo it installs, for apps/nr's tests and the
// sandbox's demo shell only: no Liqo can run on these machines. It acts on the agent cluster
// (a real kube-apiserver: the test tier's, or the sandbox's agent cluster) as liqoctl
// and Liqo's controllers would, through its API in this process (world.ts), and on NodeRings'
// side only through the kubeconfig nr gives it (whose server is the emulator's, which nothing
// can reach). It models the documented
// behaviour of liqotech/liqo@v1.0.1, the unfriendly parts first:
//
// - `install k3s` (docs/usage/liqoctl/liqoctl_install.md, pkg/liqoctl/install): `--cluster-id`
//   must be a DNS-1123 label (validation.go validateClusterID); an `--api-server-url` on
//   localhost is refused ("cannot use localhost as API Server address", validateAPIServer);
//   without one, the k3s provider leaves the API server address empty, as its kubeconfig's is
//   a localhost one (install/k3s/provider.go); every Service's ClusterIP and Pod's IP must be
//   in --service-cidr / --pod-cidr (validateServiceCIDR, validatePodCIDR); the generic
//   `install` (no provider) fails without --pod-cidr and --service-cidr
//   (install/generic/provider.go: MarkFlagRequired); `--reserved-subnets` must be CIDRs;
//   `--timeout` a Go duration. `--set` values are kept (the Helm release's values).
// - A peering is one-way, consumer → provider, and `liqoctl peer` needs the kubeconfigs of
//   both (docs/usage/peer.md: "requires the user to provide the kubeconfig of both consumer
//   and provider clusters"; cmd/liqoctl/cmd/peer.go's twoClustersPersistentPreRun): the local
//   (--kubeconfig) cluster is the consumer, the remote one the provider. With the agent as
//   consumer it gets a ForeignCluster for NodeRings with role Provider, its networking
//   (NetworkConnectionStatus Established) and authentication (AuthIdentityControlPlaneStatus
//   Ready) module conditions, and a virtual node `liqo.io/type=virtual-node` (peer.md); with
//   the agent as provider (the reverse direction, peer.md §"Bidirectional peering"), a Tenant
//   (AuthTenantStatus Ready) and the role Consumer; both make ConsumerAndProvider
//   (apis/core/v1beta1/foreigncluster_types.go). NodeRings' side must be a kubeconfig holding
//   a token (a peering user, or a consumer credential), and Liqo must be installed on the
//   agent. A reverse peering out of band needs the agent's API server to be reachable: a
//   Liqo installed without --api-server-url (k3s: a localhost kubeconfig) is refused unless
//   --in-band (UPSTREAM.md, pkg/liqoctl/install/k3s/provider.go).
// - `unpeer --remote-kubeconfig` tears one direction down, the reverse one stays (peer.md
//   §"Tear down"); `offload namespace` / `unoffload namespace`; `uninstall` refuses while
//   peerings or offloaded namespaces remain (pkg/liqoctl/uninstall/handler.go), `--purge`
//   also removes Liqo's CRDs; `info -o json` prints the local, health, network and peerings
//   sections (pkg/liqoctl/info, the checkers' GetID and json tags; `health.healthy` only while
//   every pod in the liqo namespace is Ready, localstatus/health.go; a module is Healthy when
//   every condition is Established or Ready, common/utils.go), and fails when Liqo is not
//   installed. The ForeignCluster's module conditions are those Liqo's ForeignCluster
//   controller writes (pkg/liqo-controller-manager/core/foreigncluster-controller).
// - Reflection (docs/usage/reflection.md): Secrets of an offloaded namespace "are propagated
//   by Liqo verbatim into remote clusters" under the default DenyList policy; with
//   `offloading.reflection.secret.type=AllowList` only those annotated
//   `liqo.io/allow-reflection` are. ServiceAccount tokens are reflected too unless the virtual
//   kubelet runs with `--enable-apiserver-support=false` (set through
//   `virtualKubelet.extra.args`; the chart adds `=true` otherwise:
//   deployments/liqo/templates/liqo-vk-options-template.yaml). What would reach NodeRings'
//   cluster is appended to `<state>/noderings-cluster.jsonl` when a namespace is offloaded
//   (real reflection goes on; what a test creates before offloading is what it checks).

// The release it stands for: v1.0.1, or a later one's liqoctl (an upgrade test downloads one
// that sets NR_STANDIN_LIQOCTL_VERSION); `version --client` and `install`'s default say it.
const VERSION = process.env.NR_STANDIN_LIQOCTL_VERSION ?? "v1.0.1";
const BOOLEANS = new Set([
  "skip-confirm",
  "in-band",
  "purge",
  "client",
  "networking-disabled",
  "disable-api-server-sanity-check",
  "verbose",
]);
const CRDS = [
  ["core.liqo.io", "ForeignCluster", "foreignclusters", "Cluster"],
  ["offloading.liqo.io", "NamespaceOffloading", "namespaceoffloadings", "Namespaced"],
  ["offloading.liqo.io", "VirtualNode", "virtualnodes", "Namespaced"],
  ["authentication.liqo.io", "Tenant", "tenants", "Namespaced"],
] as const;
const INSTALL_CONFIGMAP = "liqo-stand-in-install";

interface Installed {
  clusterID: string;
  version: string;
  apiServer: string;
  podCIDR: string;
  serviceCIDR: string;
  reservedSubnets: string[];
  /** `--set key=value`, in order. */
  values: Array<[string, string]>;
}

interface Condition {
  type: string;
  status: string;
}

interface ForeignClusterStatus {
  role: string;
  modules: {
    networking: { enabled: boolean; conditions: Condition[] };
    authentication: { enabled: boolean; conditions: Condition[] };
    offloading: { enabled: boolean; conditions: Condition[] };
  };
}

const w = world();
const argv = process.argv.slice(2);
const { flags, args } = parseFlags(argv, BOOLEANS);
const one = (name: string) => flags.get(name)?.at(-1);

async function installed(): Promise<Installed | undefined> {
  const cm = await getJson(w, resource("v1", "configmaps", INSTALL_CONFIGMAP, "liqo"));
  const data = (cm?.data as Record<string, string> | undefined)?.install;
  return data === undefined ? undefined : (JSON.parse(data) as Installed);
}

async function requireInstalled(): Promise<Installed> {
  const found = await installed();
  if (found === undefined) fail("ERROR  Liqo is not installed in namespace liqo (liqoctl install first)");
  return found;
}

function crd(group: string, kind: string, plural: string, scope: string) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: "v1beta1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

async function install(): Promise<void> {
  const provider = args[1];
  if (provider !== undefined && provider !== "k3s")
    fail(`ERROR  stand-in: only 'install k3s' is modelled, not ${provider}`);
  if (provider === undefined) {
    const missing = ["pod-cidr", "service-cidr"].filter((name) => one(name) === undefined);
    if (missing.length > 0) fail(`Error: required flag(s) ${missing.map((m) => `"${m}"`).join(", ")} not set`);
  }
  const clusterID = one("cluster-id");
  if (clusterID === undefined || !DNS1123_LABEL.test(clusterID) || clusterID.length > 63) {
    fail(
      `ERROR  failed validating cluster id: the cluster name must be DNS-compatible (e.g., lowercase letters, numbers and hyphens) and must be <= 63 characters`,
    );
  }
  const apiServer = one("api-server-url") ?? "";
  if (apiServer !== "") {
    let host: string;
    try {
      host = new URL(apiServer.includes("://") ? apiServer : `https://${apiServer}`).hostname;
    } catch {
      fail(`ERROR  failed validating API Server URL "${apiServer}": not a URL`);
    }
    if (["localhost", "127.0.0.1", "0.0.0.0"].includes(host)) {
      fail(`ERROR  failed validating API Server URL "${apiServer}": cannot use localhost as API Server address`);
    }
  }
  const podCIDR = one("pod-cidr") ?? "10.42.0.0/16";
  const serviceCIDR = one("service-cidr") ?? "10.43.0.0/16";
  for (const [flag, cidr] of [
    ["pod-cidr", podCIDR],
    ["service-cidr", serviceCIDR],
  ] as const) {
    if (parseCidr(cidr) === undefined) fail(`ERROR  invalid argument "${cidr}" for "--${flag}"`);
  }
  const reservedSubnets = (flags.get("reserved-subnets") ?? []).flatMap((list) => list.split(","));
  for (const cidr of reservedSubnets) {
    if (parseCidr(cidr) === undefined) fail(`ERROR  invalid argument "${cidr}" for "--reserved-subnets"`);
  }
  const timeout = one("timeout");
  if (timeout !== undefined && !isGoDuration(timeout)) fail(`ERROR  invalid argument "${timeout}" for "--timeout"`);
  const services = await list<{ metadata: { name: string }; spec: { clusterIP?: string } }>(
    w,
    resource("v1", "services"),
  );
  for (const service of services) {
    const ip = service.spec.clusterIP;
    if (ip !== undefined && ip !== "" && ip !== "None" && !cidrContains(serviceCIDR, ip)) {
      fail(
        `ERROR  failed validating Service CIDR "${serviceCIDR}": service "${service.metadata.name}" does not match the provided Service CIDR (IP: ${ip})`,
      );
    }
  }
  const values = (flags.get("set") ?? []).map((entry): [string, string] => {
    const eq = entry.indexOf("=");
    if (eq === -1) fail(`ERROR  failed parsing --set data: key "${entry}" has no value`);
    return [entry.slice(0, eq), entry.slice(eq + 1)];
  });
  const release: Installed = {
    clusterID,
    version: one("version") ?? VERSION,
    apiServer,
    podCIDR,
    serviceCIDR,
    reservedSubnets,
    values,
  };
  await apply(
    w,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "liqo" } },
    ...CRDS.map(([group, kind, plural, scope]) => crd(group, kind, plural, scope)),
  );
  await waitEstablished(
    w,
    CRDS.map(([group, , plural]) => `${plural}.${group}`),
    60_000,
  );
  await apply(w, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: INSTALL_CONFIGMAP, namespace: "liqo" },
    data: { install: JSON.stringify(release) },
  });
}

function agentServer(): string {
  return readKubeconfig(w.kubeconfig)?.server ?? "";
}

/** The kubeconfig for one side of a peering, checked: there, readable, with a server. */
function side(path: string | undefined, which: "local" | "remote"): KubeconfigSeen {
  if (path === undefined) {
    fail(
      which === "remote"
        ? "ERROR  the peering command requires the kubeconfig of both the consumer and the provider clusters: --remote-kubeconfig is missing"
        : "ERROR  no kubeconfig for the local cluster: --kubeconfig is missing",
    );
  }
  const seen = readKubeconfig(path);
  if (seen === undefined || seen.server === "") fail(`ERROR  cannot read the ${which} kubeconfig ${path}`);
  return seen;
}

const FOREIGN_CLUSTER = resource("core.liqo.io/v1beta1", "foreignclusters", w.platformClusterId);

async function foreignCluster(): Promise<ForeignClusterStatus | undefined> {
  const fc = await getJson(w, FOREIGN_CLUSTER);
  return fc?.status as ForeignClusterStatus | undefined;
}

async function writeForeignCluster(status: ForeignClusterStatus): Promise<void> {
  await apply(w, {
    apiVersion: "core.liqo.io/v1beta1",
    kind: "ForeignCluster",
    metadata: { name: w.platformClusterId, labels: { "liqo.io/remote-cluster-id": w.platformClusterId } },
    spec: { clusterID: w.platformClusterId },
  });
  await patchStatus(w, FOREIGN_CLUSTER, status);
}

const roleOf = (outbound: boolean, inbound: boolean) =>
  outbound && inbound ? "ConsumerAndProvider" : outbound ? "Provider" : inbound ? "Consumer" : "Unknown";

function directions(status: ForeignClusterStatus | undefined): { outbound: boolean; inbound: boolean } {
  const role = status?.role ?? "Unknown";
  return {
    outbound: role === "Provider" || role === "ConsumerAndProvider",
    inbound: role === "Consumer" || role === "ConsumerAndProvider",
  };
}

function statusFor(outbound: boolean, inbound: boolean): ForeignClusterStatus {
  return {
    role: roleOf(outbound, inbound),
    modules: {
      networking: {
        enabled: outbound || inbound,
        conditions:
          outbound || inbound
            ? [
                { type: "NetworkConfigurationStatus", status: "Ready" },
                { type: "NetworkGatewayPresence", status: "Ready" },
                { type: "NetworkConnectionStatus", status: "Established" },
              ]
            : [],
      },
      authentication: {
        enabled: outbound || inbound,
        conditions: [
          ...(outbound ? [{ type: "AuthIdentityControlPlaneStatus", status: "Ready" }] : []),
          ...(inbound ? [{ type: "AuthTenantStatus", status: "Ready" }] : []),
        ],
      },
      offloading: {
        enabled: outbound,
        conditions: outbound ? [{ type: "OffloadingVirtualNodeStatus", status: "Ready" }] : [],
      },
    },
  };
}

function peeringSides(): { local: KubeconfigSeen; remote: KubeconfigSeen; agentIs: "consumer" | "provider" } {
  const local = side(one("kubeconfig"), "local");
  const remote = side(one("remote-kubeconfig"), "remote");
  const agent = agentServer();
  const agentIs = local.server === agent ? "consumer" : remote.server === agent ? "provider" : undefined;
  if (agentIs === undefined) fail(`ERROR  stand-in: neither ${local.server} nor ${remote.server} is the agent cluster`);
  if (local.server === remote.server) fail("ERROR  the local and the remote cluster are the same cluster");
  const noderings = agentIs === "consumer" ? remote : local;
  if (!noderings.hasToken) fail(`ERROR  the kubeconfig ${noderings.path} for ${noderings.server} holds no credential`);
  return { local, remote, agentIs };
}

async function peer(): Promise<void> {
  const sides = peeringSides();
  const liqo = await requireInstalled();
  const location = one("gw-server-service-location");
  if (location !== undefined && location !== "Consumer" && location !== "Provider")
    fail(`ERROR  invalid argument "${location}" for "--gw-server-service-location": must be Consumer or Provider`);
  const type = one("gw-server-service-type");
  if (type !== undefined && !["LoadBalancer", "NodePort", "ClusterIP"].includes(type))
    fail(`ERROR  invalid argument "${type}" for "--gw-server-service-type"`);
  const timeout = one("timeout");
  if (timeout !== undefined && !isGoDuration(timeout)) fail(`ERROR  invalid argument "${timeout}" for "--timeout"`);
  const now = directions(await foreignCluster());
  if (sides.agentIs === "consumer") {
    await writeForeignCluster(statusFor(true, now.inbound));
    await apply(w, {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: w.platformClusterId,
        labels: {
          "liqo.io/type": "virtual-node",
          "liqo.io/remote-cluster-id": w.platformClusterId,
          "kubernetes.io/role": "agent",
        },
      },
    });
  } else {
    // NodeRings reaches the agent's API server to create what a consumer needs there.
    const address = liqo.apiServer;
    if (one("in-band") === undefined && (address === "" || /^https?:\/\/(localhost|127\.|0\.0\.0\.0)/.test(address))) {
      fail(
        "ERROR  the provider's API server is not reachable from the consumer: Liqo was installed without --api-server-url and its kubeconfig names a localhost address; install Liqo with --api-server-url, or peer --in-band",
      );
    }
    const tenantNs = `liqo-tenant-${w.platformClusterId}`;
    await apply(w, { apiVersion: "v1", kind: "Namespace", metadata: { name: tenantNs } });
    await apply(w, {
      apiVersion: "authentication.liqo.io/v1beta1",
      kind: "Tenant",
      metadata: { name: w.platformClusterId, namespace: tenantNs },
      spec: { clusterID: w.platformClusterId },
    });
    await writeForeignCluster(statusFor(now.outbound, true));
  }
}

async function unpeer(): Promise<void> {
  const sides = peeringSides();
  await requireInstalled();
  const now = directions(await foreignCluster());
  const outbound = sides.agentIs === "consumer" ? false : now.outbound;
  const inbound = sides.agentIs === "provider" ? false : now.inbound;
  if (sides.agentIs === "consumer") await remove(w, resource("v1", "nodes", w.platformClusterId));
  else await remove(w, resource("v1", "namespaces", `liqo-tenant-${w.platformClusterId}`), { wait: false });
  if (!outbound && !inbound) await remove(w, FOREIGN_CLUSTER);
  else await writeForeignCluster(statusFor(outbound, inbound));
}

interface Reflected {
  namespace: string;
  kind: "Secret" | "ServiceAccountToken" | "Unoffloaded";
  name?: string;
  data?: Record<string, string>;
}

function value(liqo: Installed, key: string): string | undefined {
  return liqo.values.filter(([k]) => k === key).at(-1)?.[1];
}

async function offload(): Promise<void> {
  const namespace = args[2];
  if (args[1] !== "namespace" || namespace === undefined)
    fail("Error: accepts 1 arg(s): liqoctl offload namespace NAME");
  const liqo = await requireInstalled();
  if ((await getJson(w, resource("v1", "namespaces", namespace))) === undefined)
    fail(`ERROR  namespace "${namespace}" not found`);
  const pod = one("pod-offloading-strategy") ?? "LocalAndRemote";
  const mapping = one("namespace-mapping-strategy") ?? "DefaultName";
  if (!["Local", "Remote", "LocalAndRemote"].includes(pod)) fail(`ERROR  invalid pod offloading strategy ${pod}`);
  if (!["EnforceSameName", "DefaultName", "SelectedName"].includes(mapping))
    fail(`ERROR  invalid namespace mapping strategy ${mapping}`);
  await apply(w, {
    apiVersion: "offloading.liqo.io/v1beta1",
    kind: "NamespaceOffloading",
    metadata: { name: "offloading", namespace },
    spec: { podOffloadingStrategy: pod, namespaceMappingStrategy: mapping },
  });
  const peered = directions(await foreignCluster()).outbound;
  await patchStatus(w, resource("offloading.liqo.io/v1beta1", "namespaceoffloadings", "offloading", namespace), {
    offloadingPhase: peered ? "Ready" : "NoClusterSelected",
    remoteNamespaceName: mapping === "EnforceSameName" ? namespace : `${namespace}-${liqo.clusterID}`,
  });
  if (!peered) return;
  const reflected: Reflected[] = [];
  const allowList = value(liqo, "offloading.reflection.secret.type") === "AllowList";
  const secretWorkers = value(liqo, "offloading.reflection.secret.workers");
  const secrets = await list<{
    metadata: { name: string; annotations?: Record<string, string> };
    data?: Record<string, string>;
  }>(w, resource("v1", "secrets", undefined, namespace));
  if (secretWorkers !== "0") {
    for (const secret of secrets) {
      const annotations = secret.metadata.annotations ?? {};
      const reflect = allowList
        ? annotations["liqo.io/allow-reflection"] !== undefined
        : annotations["liqo.io/skip-reflection"] === undefined;
      if (reflect) reflected.push({ namespace, kind: "Secret", name: secret.metadata.name, data: secret.data ?? {} });
    }
  }
  const vkArgs = value(liqo, "virtualKubelet.extra.args") ?? "";
  const apiServerSupport = !vkArgs.includes("--enable-apiserver-support=false");
  if (apiServerSupport && value(liqo, "offloading.reflection.serviceaccount.workers") !== "0") {
    const accounts = await list<{ metadata: { name: string } }>(
      w,
      resource("v1", "serviceaccounts", undefined, namespace),
    );
    for (const account of accounts) {
      reflected.push({ namespace, kind: "ServiceAccountToken", name: account.metadata.name });
    }
  }
  for (const entry of reflected) appendFileSync(join(w.state, "noderings-cluster.jsonl"), `${JSON.stringify(entry)}\n`);
}

async function unoffload(): Promise<void> {
  const namespace = args[2];
  if (args[1] !== "namespace" || namespace === undefined) fail("Error: requires at least 1 arg(s)");
  await requireInstalled();
  await remove(w, resource("offloading.liqo.io/v1beta1", "namespaceoffloadings", "offloading", namespace));
  appendFileSync(join(w.state, "noderings-cluster.jsonl"), `${JSON.stringify({ namespace, kind: "Unoffloaded" })}\n`);
}

async function uninstall(): Promise<void> {
  await requireInstalled();
  const peerings = (await foreignCluster()) !== undefined;
  const offloadings = await list(w, resource("offloading.liqo.io/v1beta1", "namespaceoffloadings"));
  if (peerings) {
    fail(
      "ERROR  Pre-uninstall checks failed: You must remove all the active peerings with other clusters before uninstalling Liqo.\nYou can disable the active peerings via the 'liqoctl unpeer' command.",
    );
  }
  if (offloadings.length > 0) {
    fail(
      "ERROR  Pre-uninstall checks failed: You must remove all the offloaded namespaces before uninstalling Liqo.\nYou can disable the namespace offloading 'liqoctl unoffload' command.",
    );
  }
  await remove(w, resource("v1", "namespaces", "liqo"), { wait: false });
  if (one("purge") !== undefined) {
    await Promise.all(
      CRDS.map(([group, , plural]) =>
        remove(w, resource("apiextensions.k8s.io/v1", "customresourcedefinitions", `${plural}.${group}`)),
      ),
    );
  }
}

async function info(): Promise<void> {
  const liqo = await requireInstalled();
  const output = one("output") ?? (flags.has("o") ? one("o") : undefined);
  const fcs = await list<{ metadata: { name: string }; status?: ForeignClusterStatus }>(
    w,
    resource("core.liqo.io/v1beta1", "foreignclusters"),
  );
  const moduleStatus = (module: { enabled: boolean; conditions: Condition[] } | undefined) =>
    module === undefined || !module.enabled
      ? "Disabled"
      : module.conditions.every((c) => c.status === "Established" || c.status === "Ready")
        ? "Healthy"
        : "Unhealthy";
  // Healthy while every pod in the liqo namespace is Ready (pkg/liqoctl/info/localstatus/health.go).
  const pods = await list<{
    metadata: { name: string };
    status?: { phase?: string; conditions?: Array<{ type: string; status: string }> };
  }>(w, resource("v1", "pods", undefined, "liqo"));
  const unready = pods.filter(
    (pod) => !(pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
  );
  const data = {
    local: { clusterID: liqo.clusterID, version: liqo.version, labels: {}, APIServerAddr: liqo.apiServer },
    health: {
      healthy: unready.length === 0,
      ...(unready.length === 0
        ? {}
        : {
            unhealthyPods: Object.fromEntries(
              unready.map((pod) => [
                pod.metadata.name,
                { status: pod.status?.phase ?? "Pending", readyContainers: 0, totalContainers: 0, restarts: 0 },
              ]),
            ),
          }),
    },
    network: {
      podCIDR: liqo.podCIDR,
      serviceCIDR: liqo.serviceCIDR,
      externalCIDR: "10.70.0.0/16",
      internalCIDR: "10.80.0.0/16",
    },
    peerings: {
      peers: fcs.map((fc) => ({
        clusterID: fc.metadata.name,
        role: fc.status?.role ?? "Unknown",
        networkingStatus: moduleStatus(fc.status?.modules.networking),
        authenticationStatus: moduleStatus(fc.status?.modules.authentication),
        offloadingStatus: moduleStatus(fc.status?.modules.offloading),
      })),
    },
  };
  if (output === "json") process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  else process.stdout.write(`Local installation info\n  Cluster ID: ${liqo.clusterID}\n  Version: ${liqo.version}\n`);
}

// liqoctl's `-o json` short form.
const dashO = argv.indexOf("-o");
if (dashO !== -1 && argv[dashO + 1] !== undefined) flags.set("output", [argv[dashO + 1] as string]);

const command = args[0];
const peering = command === "peer" || command === "unpeer";
const kubeconfigs = peering
  ? {
      local: readKubeconfig(one("kubeconfig") ?? "") ?? { path: "", mode: 0, hasToken: false, server: "" },
      remote: readKubeconfig(one("remote-kubeconfig") ?? "") ?? { path: "", mode: 0, hasToken: false, server: "" },
    }
  : undefined;
if (command !== "version") {
  record(w, { tool: "liqoctl", argv, env: {}, ...(kubeconfigs === undefined ? {} : { kubeconfigs }) });
}
// A failure is one line, as liqoctl (a Go program) prints it: never a JavaScript stack, whose
// last lines are all nr would show of it.
try {
  switch (command) {
    case "version":
      process.stdout.write(`Client version: ${VERSION}\n`);
      if (one("client") === undefined)
        process.stdout.write(`Server version: ${(await installed())?.version ?? "Unknown"}\n`);
      break;
    case "install":
      await install();
      break;
    case "peer":
      await peer();
      break;
    case "unpeer":
      await unpeer();
      break;
    case "offload":
      await offload();
      break;
    case "unoffload":
      await unoffload();
      break;
    case "uninstall":
      await uninstall();
      break;
    case "info":
      await info();
      break;
    default:
      fail(`Error: unknown command "${command ?? ""}" for "liqoctl"`);
  }
} catch (error) {
  fail(`ERROR  ${error instanceof Error ? error.message : String(error)}`);
}
