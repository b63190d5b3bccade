import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Cluster, type CreateClusterRequest, createNvkeClient } from "@nodekit/nvke-api";
import { tempDir } from "@nodekit/test-utils";
import { load } from "js-yaml";
import { afterEach, describe, expect, test } from "vitest";
import { type RunningEmulator, startEmulator } from "./emulator.ts";
import type { SiteCluster } from "./site.ts";
import { emptyState } from "./state.ts";
import { planTenantApiServers, type TenantApiServer, type TenantApiServers } from "./tenants.ts";

// The tenant API server option with a recording backend and a site cluster kept in memory:
// which servers start and stop, and what the kubeconfig Secret says, as the clock moves.

const examples = join(import.meta.dirname, "../../../examples");
const example = async (name: string) => load(await readFile(join(examples, name), "utf8"));
const timing = { provisionMs: 1000, deleteMs: 500, nodeMs: 100 };

/** A site cluster in memory, auth off. */
function memorySite(): SiteCluster & { secrets: Map<string, string> } {
  const secrets = new Map<string, string>();
  return {
    server: "https://site.invalid:6443",
    secrets,
    readConfigMap: async (namespace, name) => ({ found: false, reason: "NotFound", message: `${namespace}/${name}` }),
    reviewToken: async () => ({ authenticated: false }),
    writeKubeconfigSecret: async (_namespace, cluster, kubeconfig) => void secrets.set(cluster, kubeconfig),
    deleteKubeconfigSecret: async (_namespace, cluster) => void secrets.delete(cluster),
  };
}

/** Servers on made-up ports; records every start and stop. */
function recordingBackend(): TenantApiServers & { events: string[]; fail: boolean; live: Map<string, () => void> } {
  let port = 40_000;
  const backend = {
    events: [] as string[],
    fail: false,
    /** Kills a server "from outside" (as if its kube-apiserver crashed). */
    live: new Map<string, () => void>(),
    async start(cluster: { id: string; name: string }): Promise<TenantApiServer> {
      if (backend.fail) throw new Error("kube-apiserver exited during start-up");
      const server = `https://127.0.0.1:${++port}`;
      backend.events.push(`start ${cluster.name} ${server}`);
      let exit: () => void = () => {};
      const exited = new Promise<void>((resolve) => {
        exit = resolve;
      });
      backend.live.set(cluster.name, exit);
      return {
        server,
        caPem: `CA of ${server}`,
        certPem: `cert for ${server}`,
        keyPem: `key for ${server}`,
        pids: [port * 10, port * 10 + 1],
        exited,
        async stop() {
          backend.events.push(`stop ${cluster.name} ${server}`);
          backend.live.delete(cluster.name);
          exit();
        },
      };
    },
  };
  return backend;
}

interface KubeconfigDoc {
  clusters: Array<{ cluster: { server: string; "certificate-authority-data": string } }>;
  users: Array<{ user: Record<string, string> }>;
}
const decode = (b64: string | undefined) => Buffer.from(b64 ?? "", "base64").toString("utf8");

describe("planTenantApiServers", () => {
  test("a cluster whose Secret is due or written gets a server, until it is gone; one being deleted is not given one", () => {
    const state = emptyState();
    const record = (phase: Cluster["status"]["phase"], kubeconfigSecret: "none" | "pending" | "written" | "skipped") =>
      ({ cluster: { status: { phase } }, createdMs: 0, kubeconfigSecret }) as never;
    state.clusters = {
      provisioning: record("Provisioning", "none"),
      due: record("Provisioning", "pending"),
      ready: record("Ready", "written"),
      seeded: record("Ready", "skipped"),
      deleting: record("Deleting", "written"),
    };
    expect(planTenantApiServers(state, new Set())).toEqual({ start: ["due", "ready"], stop: [] });
    expect(planTenantApiServers(state, new Set(["ready", "deleting", "gone"]))).toEqual({
      start: ["due"],
      stop: ["gone"],
    });
  });
});

describe("an emulator with tenant API servers", () => {
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const running: RunningEmulator[] = [];
  const dirs: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const emulator of running.splice(0)) await emulator.stop();
    for (const cleanup of dirs.splice(0)) await cleanup();
  });
  async function stateFile(): Promise<string> {
    const dir = await tempDir("nvke-emulator-tenants-");
    dirs.push(dir.cleanup);
    return join(dir.path, "state.json");
  }

  async function start(site: SiteCluster, backend: TenantApiServers, file: string): Promise<RunningEmulator> {
    const emulator = await startEmulator({
      kubeconfigPath: "unused",
      site,
      stateFile: file,
      timing,
      now: () => clock,
      tenantApiServers: backend,
    });
    running.push(emulator);
    return emulator;
  }

  async function createCapdDemo(emulator: RunningEmulator) {
    const client = createNvkeClient({ baseUrl: emulator.url });
    await client.createMachineImage((await example("machineimage.yaml")) as never);
    await client.createClusterRelease((await example("clusterrelease.yaml")) as never);
    return {
      client,
      cluster: await client.createCluster((await example("capd-cluster.yaml")) as CreateClusterRequest),
    };
  }

  test("starts a server as the cluster becomes Ready, names it in the kubeconfig Secret, stops it once the cluster is gone", async () => {
    // Given an emulator with a recording backend
    const site = memorySite();
    const backend = recordingBackend();
    const emulator = await start(site, backend, await stateFile());
    const { client, cluster } = await createCapdDemo(emulator);

    // While provisioning, nothing runs
    await emulator.reconcile();
    expect(backend.events).toEqual([]);

    // When the cluster falls due
    clock += timing.provisionMs;
    await emulator.reconcile();

    // Then one server started, and the Secret holds its address, CA and client certificate
    expect(backend.events).toEqual(["start capd-demo https://127.0.0.1:40001"]);
    const kubeconfig = load(site.secrets.get("capd-demo") ?? "") as KubeconfigDoc;
    expect(kubeconfig.clusters[0]?.cluster.server).toBe("https://127.0.0.1:40001");
    expect(decode(kubeconfig.clusters[0]?.cluster["certificate-authority-data"])).toBe("CA of https://127.0.0.1:40001");
    expect(decode(kubeconfig.users[0]?.user["client-certificate-data"])).toBe("cert for https://127.0.0.1:40001");
    expect(kubeconfig.users[0]?.user.token).toBeUndefined();
    // And the cluster is Ready at that endpoint
    expect(await client.getCluster(cluster.id)).toMatchObject({
      status: { phase: "Ready", controlPlaneEndpoint: "https://127.0.0.1:40001" },
    });
    expect(emulator.tenants()).toEqual([
      { clusterID: cluster.id, clusterName: "capd-demo", server: "https://127.0.0.1:40001", pids: [400010, 400011] },
    ]);

    // When it is deleted, the server runs on while the cluster is Deleting
    await client.deleteCluster(cluster.id);
    await emulator.reconcile();
    expect(backend.events).toHaveLength(1);

    // And once it is gone, the server stops and the Secret goes
    clock += timing.deleteMs;
    await emulator.reconcile();
    expect(backend.events).toEqual([
      "start capd-demo https://127.0.0.1:40001",
      "stop capd-demo https://127.0.0.1:40001",
    ]);
    expect(site.secrets.has("capd-demo")).toBe(false);
    expect(emulator.tenants()).toEqual([]);
  });

  test("a restarted emulator gives its Ready clusters new servers and Secrets; stop() stops them", async () => {
    // Given a Ready cluster, and the emulator stopped
    const site = memorySite();
    const backend = recordingBackend();
    const file = await stateFile();
    const first = await start(site, backend, file);
    await createCapdDemo(first);
    clock += timing.provisionMs;
    await first.reconcile();
    await running.splice(0)[0]?.stop();
    expect(backend.events).toEqual([
      "start capd-demo https://127.0.0.1:40001",
      "stop capd-demo https://127.0.0.1:40001",
    ]);

    // When it starts again from the state file
    const second = await start(site, backend, file);
    await second.reconcile();

    // Then the cluster has a new server, and its Secret names it
    expect(backend.events.at(-1)).toBe("start capd-demo https://127.0.0.1:40002");
    const kubeconfig = load(site.secrets.get("capd-demo") ?? "") as KubeconfigDoc;
    expect(kubeconfig.clusters[0]?.cluster.server).toBe("https://127.0.0.1:40002");
    await second.stop();
    expect(backend.events.at(-1)).toBe("stop capd-demo https://127.0.0.1:40002");
  });

  test("a server that dies on its own is replaced; one that cannot start keeps the cluster Provisioning with the reason", async () => {
    const site = memorySite();
    const backend = recordingBackend();
    const emulator = await start(site, backend, await stateFile());
    const { client, cluster } = await createCapdDemo(emulator);

    // A start that fails: the cluster waits, saying why
    backend.fail = true;
    clock += timing.provisionMs;
    await emulator.reconcile();
    expect(await client.getCluster(cluster.id)).toMatchObject({
      status: {
        phase: "Provisioning",
        message:
          "waiting: cannot write the kubeconfig Secret nvke-clusters/capd-demo-kubeconfig: cannot start the tenant API server: kube-apiserver exited during start-up",
      },
    });
    expect(site.secrets.has("capd-demo")).toBe(false);

    // Once starting works, it is Ready
    backend.fail = false;
    clock += 5_000;
    await emulator.reconcile();
    expect((await client.getCluster(cluster.id)).status.phase).toBe("Ready");

    // The server dies from outside: another starts, and the Secret names the new one
    backend.live.get("capd-demo")?.();
    await new Promise((resolve) => setImmediate(resolve));
    await emulator.reconcile();
    expect(backend.events).toEqual([
      "start capd-demo https://127.0.0.1:40001",
      "start capd-demo https://127.0.0.1:40002",
    ]);
    const kubeconfig = load(site.secrets.get("capd-demo") ?? "") as KubeconfigDoc;
    expect(kubeconfig.clusters[0]?.cluster.server).toBe("https://127.0.0.1:40002");
  });

  test("off by default: the Secret names the endpoint nothing serves, with a placeholder token", async () => {
    const site = memorySite();
    const emulator = await startEmulator({
      kubeconfigPath: "unused",
      site,
      stateFile: await stateFile(),
      timing,
      now: () => clock,
    });
    running.push(emulator);
    const { cluster } = await createCapdDemo(emulator);
    clock += timing.provisionMs;
    await emulator.reconcile();
    const kubeconfig = load(site.secrets.get("capd-demo") ?? "") as KubeconfigDoc;
    expect(kubeconfig.clusters[0]?.cluster.server).toBe(cluster.status.controlPlaneEndpoint);
    expect(kubeconfig.users[0]?.user.token).toMatch(/^nvke-emulator\.[0-9a-f]{48}$/);
    expect(emulator.tenants()).toEqual([]);
  });
});
