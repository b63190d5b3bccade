import { writeFile } from "node:fs/promises";
import { BlockList, isIPv4 } from "node:net";
import { join } from "node:path";
import { createExecaRunner } from "@nodekit/process";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { planInstall } from "../src/services/install.ts";
import { shippedContext } from "./shipped-context.ts";

// Issue 26 §1 item 1 (NV-7, ../shared/UPSTREAM.md "The controller API's NodePort and the
// client-networks NetworkPolicy"): the shipped chart answers in-cluster pods only, by a
// NetworkPolicy of its own; the install's client-networks policy adds the operator's
// networks; the Service keeps the client's source address (externalTrafficPolicy: Local).
// The real chart (deploy/nico/nvke-controller) with the values the install renders, and the
// policy the install's plan writes, are applied to a real API server; what they admit is read
// from the objects the server returns (no pod runs in this tier, so nothing is sent).
// A file of its own control plane: the chart's NodePort 30080 is allocated cluster-wide.

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: unknown[];
}
interface Peer {
  ipBlock?: { cidr: string; except?: string[] };
  namespaceSelector?: LabelSelector;
  podSelector?: LabelSelector;
}
interface Policy {
  metadata: { name: string; namespace: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: Array<{ from?: Peer[]; ports?: Array<{ protocol?: string; port?: number | string; endPort?: number }> }>;
  };
}
/** Where a connection comes from: a pod (its namespace's labels and its own), or an address outside the cluster. */
type Source = { pod: { namespace: Record<string, string>; labels: Record<string, string> } } | { ip: string };
/** The pod a connection goes to: its namespace, labels and named container ports. */
interface Target {
  namespace: string;
  labels: Record<string, string>;
  ports: Record<string, number>;
}

const matches = (selector: LabelSelector | undefined, labels: Record<string, string>) => {
  if (selector?.matchExpressions?.length) throw new Error("this test reads matchLabels only");
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
};

function inBlock(ip: string, block: NonNullable<Peer["ipBlock"]>): boolean {
  const list = (cidrs: string[]) => {
    const found = new BlockList();
    for (const cidr of cidrs) {
      const [address = "", bits = ""] = cidr.split("/");
      found.addSubnet(address, Number(bits), isIPv4(address) ? "ipv4" : "ipv6");
    }
    return found;
  };
  const family = isIPv4(ip) ? "ipv4" : "ipv6";
  return list([block.cidr]).check(ip, family) && !list(block.except ?? []).check(ip, family);
}

function peerAdmits(peer: Peer, source: Source): boolean {
  if (peer.ipBlock !== undefined) return "ip" in source && inBlock(source.ip, peer.ipBlock);
  if (!("pod" in source)) return false;
  // A podSelector alone means pods of the policy's own namespace; these tests' sources are elsewhere.
  if (peer.namespaceSelector === undefined) return false;
  return matches(peer.namespaceSelector, source.pod.namespace) && matches(peer.podSelector, source.pod.labels);
}

/**
 * Whether the policies let `source` reach `target` on TCP `port`, as the NetworkPolicy API
 * defines it: a pod no Ingress policy selects takes everything; a selected pod takes what
 * any rule of any policy selecting it allows (policies are additive).
 */
function admits(policies: readonly Policy[], target: Target, source: Source, port: number): boolean {
  const selecting = policies.filter(
    (policy) =>
      policy.metadata.namespace === target.namespace &&
      (policy.spec.policyTypes ?? ["Ingress"]).includes("Ingress") &&
      matches(policy.spec.podSelector, target.labels),
  );
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (policy.spec.ingress ?? []).some((rule) => {
      const fromOk = rule.from === undefined || rule.from.length === 0 || rule.from.some((p) => peerAdmits(p, source));
      const portOk =
        rule.ports === undefined ||
        rule.ports.some((entry) => {
          if ((entry.protocol ?? "TCP") !== "TCP") return false;
          const first = typeof entry.port === "string" ? target.ports[entry.port] : entry.port;
          return first === undefined || (port >= first && port <= (entry.endPort ?? first));
        });
      return fromOk && portOk;
    }),
  );
}

let admin: string;
let work: string;
let cleanup: () => Promise<void>;
let helm: string;
const runner = createExecaRunner();
const kubectl = async (...args: string[]) =>
  (await runner.run({ command: "kubectl", args: ["--kubeconfig", admin, ...args] })).stdout;
const json = async (...args: string[]) => JSON.parse(await kubectl(...args, "--output=json"));

beforeAll(async () => {
  const plane = await useControlPlane({ dedicated: true });
  admin = plane.adminKubeconfigPath;
  helm = join(plane.binDir, "helm");
  ({ path: work, cleanup } = await tempDir("nvkectl-controller-api-"));
});
afterAll(() => cleanup?.());

/** The content the install's plan writes in `item` (its write-file step for `file`). */
function written(plan: ReturnType<typeof planInstall>, item: string, file: string): string {
  const step = plan.items
    .find((candidate) => candidate.id === item)
    ?.steps.find((s) => s.kind === "action" && String(s.params?.path).endsWith(file));
  if (step?.kind !== "action") throw new Error(`the plan writes no ${file} in ${item}`);
  return String(step.params?.content);
}

/** The shipped chart with the values the install renders, then the install's client-networks policy; what the server holds. */
async function installChartAndPolicy(
  clientNetworks: string[],
  controllerApi?: { port: number; podSelector: Record<string, string> },
) {
  const context = await shippedContext({}, { workDir: work });
  const plan = planInstall({
    ...context,
    stack: { ...context.stack, clientNetworks, controllerApi: controllerApi ?? context.stack.controllerApi },
  });
  await writeFile(join(work, "stack-values.yaml"), written(plan, "nvke-controller", "stack-values.yaml"));
  const chart = join(repoRoot, "deploy/nico/nvke-controller");
  await runner.run({
    command: helm,
    args: [
      "upgrade",
      "--install",
      "nvke-controller",
      join(chart, "chart"),
      "--namespace",
      "nke-controller",
      "--create-namespace",
      "--values",
      join(chart, "values.yaml"),
      "--values",
      join(work, "stack-values.yaml"),
      "--kubeconfig",
      admin,
    ],
    env: { HOME: work },
  });
  const clientPolicy = plan.items.find((item) => item.id === "client-networks");
  if (clientPolicy !== undefined) {
    await writeFile(join(work, "client-networks.yaml"), written(plan, "client-networks", "client-networks.yaml"));
    await kubectl("apply", "--server-side", "--filename", join(work, "client-networks.yaml"));
  }
  const deployment = await json("get", "deployment", "nvke-controller", "--namespace", "nke-controller");
  const container = deployment.spec.template.spec.containers[0];
  const target: Target = {
    namespace: "nke-controller",
    labels: deployment.spec.template.metadata.labels,
    ports: Object.fromEntries(
      (container.ports as Array<{ name: string; containerPort: number }>).map((p) => [p.name, p.containerPort]),
    ),
  };
  const policies = (await json("get", "networkpolicies", "--namespace", "nke-controller")).items as Policy[];
  const service = await json("get", "service", "nvke-controller-api", "--namespace", "nke-controller");
  return { target, policies, service, apiPort: target.ports.api ?? 0 };
}

const monitoringPod: Source = {
  pod: { namespace: { "kubernetes.io/metadata.name": "monitoring" }, labels: { app: "prometheus" } },
};

describe("the controller API is guarded as the seed says (NV-7)", () => {
  test("with client networks: in-cluster pods and the listed networks reach the API port, nothing else", async () => {
    const { target, policies, apiPort } = await installChartAndPolicy(["10.20.0.0/24"]);
    expect(apiPort).toBe(8080);
    // Two policies select the controller's pods: the chart's and the install's.
    expect(policies.map((p) => p.metadata.name).sort()).toEqual([
      "nvke-controller-api-clients",
      "nvke-controller-api-in-cluster",
    ]);
    for (const policy of policies) expect(matches(policy.spec.podSelector, target.labels)).toBe(true);

    expect(admits(policies, target, monitoringPod, apiPort)).toBe(true);
    expect(admits(policies, target, { ip: "10.20.0.7" }, apiPort)).toBe(true);
    expect(admits(policies, target, { ip: "198.51.100.7" }, apiPort)).toBe(false);
    expect(admits(policies, target, { ip: "10.20.1.7" }, apiPort)).toBe(false);
    // Only the API port is opened.
    expect(admits(policies, target, monitoringPod, 9090)).toBe(false);
    expect(admits(policies, target, { ip: "10.20.0.7" }, 9090)).toBe(false);
  });

  test("the Service keeps the client's address: a NodePort with externalTrafficPolicy Local onto the API port", async () => {
    const { service, target } = await installChartAndPolicy(["10.20.0.0/24"]);
    expect(service.spec).toMatchObject({
      type: "NodePort",
      externalTrafficPolicy: "Local",
      selector: { "app.kubernetes.io/name": "nvke-controller" },
    });
    expect(service.spec.ports).toEqual([
      expect.objectContaining({ name: "api", port: 8080, targetPort: "api", nodePort: 30080, protocol: "TCP" }),
    ]);
    expect(matches({ matchLabels: service.spec.selector }, target.labels)).toBe(true);
  });

  test("without client networks the chart alone answers in-cluster pods only", async () => {
    await kubectl("delete", "networkpolicy", "nvke-controller-api-clients", "--namespace", "nke-controller");
    const { target, policies, apiPort } = await installChartAndPolicy([]);
    expect(policies.map((p) => p.metadata.name)).toEqual(["nvke-controller-api-in-cluster"]);
    expect(policies[0]?.spec.ingress).toEqual([
      { from: [{ namespaceSelector: {} }], ports: [{ protocol: "TCP", port: 8080 }] },
    ]);
    expect(admits(policies, target, monitoringPod, apiPort)).toBe(true);
    expect(admits(policies, target, { ip: "10.20.0.7" }, apiPort)).toBe(false);
    expect(admits(policies, target, { ip: "203.0.113.9" }, apiPort)).toBe(false);
  });

  test("another controllerApi port and pod label: the chart's pods and port and the install's policy still agree", async () => {
    const { target, policies, service, apiPort } = await installChartAndPolicy(["10.20.0.0/24"], {
      port: 9443,
      podSelector: { "app.kubernetes.io/name": "nvke-controller", "nvke.io/tier": "api" },
    });
    expect(apiPort).toBe(9443);
    expect(target.labels).toMatchObject({ "nvke.io/tier": "api" });
    expect(service.spec.ports[0]).toMatchObject({ port: 9443, targetPort: "api" });
    for (const policy of policies) expect(matches(policy.spec.podSelector, target.labels)).toBe(true);
    expect(admits(policies, target, monitoringPod, 9443)).toBe(true);
    expect(admits(policies, target, { ip: "10.20.0.7" }, 9443)).toBe(true);
    expect(admits(policies, target, { ip: "10.20.0.7" }, 8080)).toBe(false);
  });
});
