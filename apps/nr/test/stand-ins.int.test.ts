import { execFile } from "node:child_process";
import { access, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { crdEstablishedWaitArgs } from "@nodekit/kube";
import { tempDir } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calicoOperator, FIXTURES, kubectl, kubectlApply, type StandIns, standIns } from "./helpers.ts";

// The stand-ins themselves (issue 23 §1): the k3s installer and liqoctl as strict as the
// programs they stand for, on the test tier's real kube-apiserver. What nr's tests prove
// with them is only as good as what these prove of them.

const run = promisify(execFile);
const PLATFORM = "noderings-test";
let dir: Awaited<ReturnType<typeof tempDir>>;
let kubeconfig: string;
let path: string;
let stand: StandIns;

beforeAll(async () => {
  const plane = await useControlPlane({ dedicated: true });
  kubeconfig = plane.adminKubeconfigPath;
  dir = await tempDir("nr-stand-ins-");
  stand = await standIns(dir.path, { kubeconfig, platformClusterId: PLATFORM });
  path = `${stand.bin}:${plane.binDir}:${process.env.PATH}`;
});
afterAll(() => dir?.cleanup());

/** Runs a stand-in as nr would: by name on PATH; its exit code, stdout and stderr. */
async function call(
  tool: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(tool, args, { env: { PATH: path, HOME: dir.path, ...env }, encoding: "utf8" });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

const nodeReady = async (name: string) => {
  const node = JSON.parse(await kubectl(kubeconfig, ["get", `node/${name}`, "-o", "json"]));
  return node.status.conditions.find((c: { type: string }) => c.type === "Ready") as {
    status: string;
    message: string;
  };
};

/** A kubeconfig for NodeRings' side: the emulator's peering server, with a one-time token. */
async function noderingsKubeconfig(name: string, token = "nrpu_one-time-token-0123456789"): Promise<string> {
  const file = join(dir.path, name);
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "noderings", cluster: { server: "https://peering.noderings-emulator.invalid:6443" } }],
      users: [{ name: "peer", user: { token } }],
      contexts: [{ name: "noderings", context: { cluster: "noderings", user: "peer" } }],
      "current-context": "noderings",
    }),
    { mode: 0o600 },
  );
  return file;
}

describe("the k3s installer stand-in", () => {
  it("without flannel the node registers NotReady (cni plugin not initialized) until Calico runs; the name as the kubelet takes it", async () => {
    const result = await call(
      "k3s-install.sh",
      ["server", "--flannel-backend=none", "--disable-network-policy", "--node-name=PVE-Upper.Example"],
      { INSTALL_K3S_VERSION: "v1.33.5+k3s1" },
    );
    expect(result.code, result.stderr).toBe(0);
    // Given no CNI: NotReady, for the kubelet's reason
    const ready = await nodeReady("pve-upper.example");
    expect(ready.status).toBe("False");
    expect(ready.message).toContain("cni plugin not initialized");
    // When Calico is applied and its operator runs, calico-node makes it Ready
    const stop = calicoOperator(kubeconfig);
    try {
      await kubectl(kubeconfig, ["apply", "-f", join(FIXTURES, "calico/operator-crds.yaml")]);
      await kubectl(kubeconfig, ["apply", "--server-side", "-f", join(FIXTURES, "calico/tigera-operator.yaml")]);
      for (const args of crdEstablishedWaitArgs(["crd/installations.operator.tigera.io"], "30s")) {
        await kubectl(kubeconfig, args);
      }
      // Still NotReady: Calico is not running before its Installation says what to run
      expect((await nodeReady("pve-upper.example")).status).toBe("False");
      await kubectlApply(kubeconfig, {
        apiVersion: "operator.tigera.io/v1",
        kind: "Installation",
        metadata: { name: "default" },
        spec: {},
      });
      await kubectl(kubeconfig, ["wait", "--for=condition=Ready", "node/pve-upper.example", "--timeout=30s"]);
      await kubectl(kubeconfig, ["wait", "--for=condition=Available", "tigerastatus/calico", "--timeout=30s"]);
    } finally {
      stop();
    }
  }, 180_000);

  it("writes k3s-uninstall.sh, and a re-run with other server flags changes the running config", async () => {
    // The install script as register runs it, for node "rerun" with this pod CIDR.
    const serverWithPods = (cidr: string) =>
      call("k3s-install.sh", ["server", "--flannel-backend=none", `--cluster-cidr=${cidr}`, "--node-name=rerun"]);
    const first = await serverWithPods("10.42.0.0/16");
    expect(first.code, first.stderr).toBe(0);
    await access(join(stand.bin, "k3s-uninstall.sh"));
    const second = await serverWithPods("10.50.0.0/16");
    expect(second.code, second.stderr).toBe(0);
    const config = await stand.k3sConfig();
    expect(config?.exec).toContain("--cluster-cidr=10.50.0.0/16");
    expect(config?.history.at(-1)).toContain("--cluster-cidr=10.42.0.0/16");
    expect(config?.restarts).toBeGreaterThanOrEqual(1);
    // An unknown server flag stops k3s from starting
    const unknown = await call("k3s-install.sh", ["server", "--no-such-flag=1"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("flag provided but not defined");
    // The uninstall script removes the node and the running config, then itself
    const removed = await call("k3s-uninstall.sh", []);
    expect(removed.code, removed.stderr).toBe(0);
    await expect(kubectl(kubeconfig, ["get", "node/rerun"])).rejects.toThrow();
    expect(await stand.k3sConfig()).toBeUndefined();
    await expect(access(join(stand.bin, "k3s-uninstall.sh"))).rejects.toThrow();
  }, 180_000);
});

describe("the liqoctl stand-in", () => {
  const install = ["install", "k3s", "--kubeconfig", "", "--cluster-id", "agent-1", "--pod-cidr", "10.42.0.0/16"];
  const withKubeconfig = (args: string[]) =>
    args.map((arg, i) => (args[i - 1] === "--kubeconfig" && arg === "" ? kubeconfig : arg));

  it("install fails without its required flags, on a localhost API server URL, and on another service CIDR", async () => {
    expect((await call("liqoctl", ["info", "-o", "json", "--kubeconfig", kubeconfig])).stderr).toContain(
      "not installed",
    );
    const generic = await call("liqoctl", ["install", "--kubeconfig", kubeconfig, "--cluster-id", "agent-1"]);
    expect(generic.code).toBe(1);
    expect(generic.stderr).toContain('required flag(s) "pod-cidr", "service-cidr" not set');
    const localhost = await call("liqoctl", [
      ...withKubeconfig(install),
      "--service-cidr",
      "10.0.0.0/24",
      "--api-server-url",
      "https://127.0.0.1:6443",
    ]);
    expect(localhost.stderr).toContain("cannot use localhost as API Server address");
    const badId = await call("liqoctl", [
      ...withKubeconfig(install).map((a) => (a === "agent-1" ? "Agent_1" : a)),
      "--service-cidr",
      "10.0.0.0/24",
    ]);
    expect(badId.stderr).toContain("DNS-compatible");
    // The tier's apiserver serves 10.0.0.0/24: k3s's default 10.43.0.0/16 is not this cluster's range
    const otherRange = await call("liqoctl", withKubeconfig(install));
    expect(otherRange.stderr).toContain('service "kubernetes" does not match the provided Service CIDR');
  });

  it("a peering is one-way and needs both kubeconfigs; unpeer undoes one direction; info -o json tells; uninstall refuses while peered", async () => {
    const installed = await call("liqoctl", [
      ...withKubeconfig(install),
      "--service-cidr",
      "10.0.0.0/24",
      "--api-server-url",
      "https://10.20.0.11:6443",
      "--reserved-subnets",
      "10.20.0.0/24",
    ]);
    expect(installed.code, installed.stderr).toBe(0);
    const noderings = await noderingsKubeconfig("peering-user.kubeconfig");
    // Both kubeconfigs, always
    const one = await call("liqoctl", ["peer", "--kubeconfig", kubeconfig]);
    expect(one.code).toBe(1);
    expect(one.stderr).toContain("requires the kubeconfig of both the consumer and the provider");
    // NodeRings' side must hold a credential
    const empty = await noderingsKubeconfig("empty.kubeconfig", "");
    expect(
      (await call("liqoctl", ["peer", "--kubeconfig", kubeconfig, "--remote-kubeconfig", empty])).stderr,
    ).toContain("holds no credential");
    // The agent as the consumer: NodeRings is its provider, and it gets a virtual node
    const outbound = await call("liqoctl", ["peer", "--kubeconfig", kubeconfig, "--remote-kubeconfig", noderings]);
    expect(outbound.code, outbound.stderr).toBe(0);
    const role = async () =>
      JSON.parse(await kubectl(kubeconfig, ["get", `foreignclusters.core.liqo.io/${PLATFORM}`, "-o", "json"])).status;
    expect((await role()).role).toBe("Provider");
    expect(
      await kubectl(kubeconfig, [
        "get",
        "nodes",
        "-l",
        `liqo.io/type=virtual-node,liqo.io/remote-cluster-id=${PLATFORM}`,
        "-o",
        "name",
      ]),
    ).toContain(PLATFORM);
    // The reverse direction: NodeRings the consumer, the agent the provider
    const consumer = await noderingsKubeconfig("consumer.kubeconfig");
    const inbound = await call("liqoctl", ["peer", "--kubeconfig", consumer, "--remote-kubeconfig", kubeconfig]);
    expect(inbound.code, inbound.stderr).toBe(0);
    const both = await role();
    expect(both.role).toBe("ConsumerAndProvider");
    expect(both.modules.authentication.conditions.map((c: { type: string }) => c.type).sort()).toEqual([
      "AuthIdentityControlPlaneStatus",
      "AuthTenantStatus",
    ]);
    const info = JSON.parse((await call("liqoctl", ["info", "-o", "json", "--kubeconfig", kubeconfig])).stdout);
    expect(info).toMatchObject({
      local: { clusterID: "agent-1", APIServerAddr: "https://10.20.0.11:6443" },
      health: { healthy: true },
      network: { podCIDR: "10.42.0.0/16", serviceCIDR: "10.0.0.0/24" },
      peerings: {
        peers: [
          {
            clusterID: PLATFORM,
            role: "ConsumerAndProvider",
            networkingStatus: "Healthy",
            authenticationStatus: "Healthy",
          },
        ],
      },
    });
    // Uninstall refuses while peered
    const refused = await call("liqoctl", ["uninstall", "--kubeconfig", kubeconfig, "--skip-confirm"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("You must remove all the active peerings");
    // Unpeer one direction: the reverse one stays
    expect((await call("liqoctl", ["unpeer", "--kubeconfig", kubeconfig, "--remote-kubeconfig", noderings])).code).toBe(
      0,
    );
    expect((await role()).role).toBe("Consumer");
    expect((await call("liqoctl", ["unpeer", "--kubeconfig", consumer, "--remote-kubeconfig", kubeconfig])).code).toBe(
      0,
    );
    await expect(kubectl(kubeconfig, ["get", `foreignclusters.core.liqo.io/${PLATFORM}`])).rejects.toThrow();
    // Now it uninstalls, and --purge takes the CRDs too
    const gone = await call("liqoctl", ["uninstall", "--purge", "--kubeconfig", kubeconfig, "--skip-confirm"]);
    expect(gone.code, gone.stderr).toBe(0);
    await expect(kubectl(kubeconfig, ["get", "crd/foreignclusters.core.liqo.io"])).rejects.toThrow();
  }, 180_000);

  it("reflects an offloaded namespace's Secrets and ServiceAccount tokens to NodeRings unless Liqo was installed restricted", async () => {
    const noderings = await noderingsKubeconfig("peering-user-2.kubeconfig");
    for (const namespace of ["open-ns", "closed-ns"]) {
      await kubectl(kubeconfig, ["create", "namespace", namespace]);
      await kubectl(kubeconfig, [
        "create",
        "secret",
        "generic",
        "creds",
        "-n",
        namespace,
        "--from-literal=token=canary-reflected",
      ]);
      await kubectl(kubeconfig, ["create", "serviceaccount", "worker", "-n", namespace]);
    }
    const installWith = async (...set: string[]) => {
      const result = await call("liqoctl", [
        ...withKubeconfig(install),
        "--service-cidr",
        "10.0.0.0/24",
        ...set.flatMap((s) => ["--set", s]),
      ]);
      expect(result.code, result.stderr).toBe(0);
    };
    await installWith();
    expect((await call("liqoctl", ["peer", "--kubeconfig", kubeconfig, "--remote-kubeconfig", noderings])).code).toBe(
      0,
    );
    // The defaults: DenyList, API server support on
    expect((await call("liqoctl", ["offload", "namespace", "open-ns", "--kubeconfig", kubeconfig])).code).toBe(0);
    const open = (await stand.reflected()).filter((r) => r.namespace === "open-ns");
    expect(open.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(["Secret/creds", "ServiceAccountToken/worker"]);
    // Restricted: Secrets on an allow list, ServiceAccount tokens off
    await installWith(
      "offloading.reflection.secret.type=AllowList",
      "virtualKubelet.extra.args={--enable-apiserver-support=false}",
    );
    expect((await call("liqoctl", ["offload", "namespace", "closed-ns", "--kubeconfig", kubeconfig])).code).toBe(0);
    expect((await stand.reflected()).filter((r) => r.namespace === "closed-ns")).toEqual([]);
    // Unoffload, then the offloaded namespaces no longer hold uninstall back
    expect((await call("liqoctl", ["unoffload", "namespace", "open-ns", "--kubeconfig", kubeconfig])).code).toBe(0);
    const offloading = JSON.parse(
      await kubectl(kubeconfig, ["get", "namespaceoffloadings.offloading.liqo.io", "-A", "-o", "json"]),
    );
    expect(offloading.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace)).toEqual([
      "closed-ns",
    ]);
  }, 180_000);
});
