import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import {
  answerChaos,
  type CommonChaos,
  type Exchange,
  Router,
  readJson,
  serveInfoRoutes,
  startEmulatorServer,
} from "@nodekit/emulator-kit";
import { buildOpenApiDocument, type Cluster, MERGE_PATCH_CONTENT_TYPE } from "@nodekit/nvke-api";
import { ApiError, badRequest, notFound, refuse } from "./api-error.ts";
import { Authenticator } from "./auth.ts";
import {
  type ControllerContext,
  createCluster,
  createClusterRelease,
  createMachineImage,
  createNodePool,
  createNodePoolRelease,
  deleteCluster,
  deleteNodePool,
  getClusterRecord,
  getNodePoolRecord,
  patchCluster,
  patchNodePool,
} from "./controller.ts";
import { renderTenantKubeconfig } from "./kubeconfig.ts";
import { paginate, paginateSorted, type SortedEntries, sortedByKey } from "./paging.ts";
import { connectSite, type SiteCluster } from "./site.ts";
import {
  advance,
  type ClusterRecord,
  DEFAULT_TIMING,
  type EmulatorState,
  iso,
  markReady,
  nextDueAt,
  renderCluster,
  renderNodePool,
  type Timing,
} from "./state.ts";
import { openStateStore } from "./store.ts";
import { planTenantApiServers, type TenantApiServer, type TenantApiServers } from "./tenants.ts";

export interface EmulatorOptions {
  /** Kubeconfig of the site cluster: auth ConfigMap, TokenReviews and kubeconfig Secrets go there. */
  kubeconfigPath: string;
  /** The state file (JSON, written atomically); an existing one is resumed. */
  stateFile: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  timing?: Partial<Timing>;
  /** When off, deleting a cluster's last joined control-plane pool is refused (default on). */
  controlPlaneController?: boolean;
  /** Where the `<cluster>-kubeconfig` Secrets go (default `nvke-clusters`). */
  clustersNamespace?: string;
  /**
   * How long the auth ConfigMap search is served before it is re-read in the background
   * (default 1000 ms; 0: read on every request). A request never waits on a view older
   * than 2 s: it reads the ConfigMaps again first.
   */
  authConfigTtlMs?: number;
  /**
   * The token the control routes (`/_emulator/*`) take, as `Authorization: Bearer <token>`
   * (default: none; they take any request, as the bench's seeding does).
   */
  adminToken?: string;
  /** One line per request and per background failure (default: nothing). */
  log?: (line: string) => void;
  /** The clock (ms since the epoch); tests may pass their own. */
  now?: () => number;
  /** Instead of kubeconfigPath: the site as an object (tests, or a fake for unit use). */
  site?: SiteCluster;
  /**
   * Back each Ready tenant cluster with an API server of its own, whose CA and credentials
   * go in the `<cluster>-kubeconfig` Secret; it starts as the cluster becomes Ready and stops
   * once the cluster is gone (and with the emulator). Off by default: the kubeconfig then
   * names a server nothing listens on. `testenvTenantApiServers()` gives real ones.
   */
  tenantApiServers?: TenantApiServers;
}

/** A running tenant API server, as `RunningEmulator.tenants()` lists them. */
export interface TenantApiServerInfo {
  clusterID: string;
  clusterName: string;
  server: string;
  pids: readonly number[];
}

/** Emulator-only fault injection: how the next requests are answered instead of normally (the kit's common modes). */
export type ChaosMode = CommonChaos;

export interface SeedOptions {
  /** How many clusters to add. */
  clusters: number;
  /** Names are `<namePrefix>-<n>` (default `seed`). */
  namePrefix?: string;
}

export interface RunningEmulator {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /**
   * Stops serving and writes the state file: background work stops after the step it is in
   * (what is left stays due in the state, for the next start), so this takes seconds however
   * large the state.
   */
  stop(): Promise<void>;
  /** The next `count` API requests are answered with `mode` (emulator-only; also `POST /_emulator/chaos`). */
  chaos(mode: ChaosMode, count?: number): void;
  /** Adds Ready clusters in bulk, without kubeconfig Secrets (emulator-only; also `POST /_emulator/seed`). */
  seed(options: SeedOptions): Promise<{ created: number }>;
  /** Settles every due transition and kubeconfig Secret now (tests use it instead of sleeping). */
  reconcile(): Promise<void>;
  /** The tenant API servers that run now (none unless `tenantApiServers` was given). */
  tenants(): TenantApiServerInfo[];
  readonly state: EmulatorState;
}

/** A tenant API server that failed to start is tried again after this long (it builds nothing, but costs seconds). */
const TENANT_RETRY_MS = 5_000;

/** Starts the NVKE controller emulator; resolves once it is listening. */
export async function startEmulator(options: EmulatorOptions): Promise<RunningEmulator> {
  const timing: Timing = { ...DEFAULT_TIMING, ...options.timing };
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  // First: a state file of the wrong shape is refused before anything else starts.
  const store = await openStateStore(options.stateFile);
  const { state } = store;
  const clustersNamespace = options.clustersNamespace ?? "nvke-clusters";
  const site = options.site ?? connectSite(options.kubeconfigPath);
  const auth = new Authenticator(site, {
    ...(options.authConfigTtlMs === undefined ? {} : { configTtlMs: options.authConfigTtlMs }),
    now,
  });
  // Fail at start, not on the first request, when the site cluster cannot be reached.
  const initialAuth = await auth.currentConfig().catch((error: unknown) => {
    throw new Error(
      `cannot reach the site cluster at ${site.server} with ${options.kubeconfigPath}: ${(error as Error).message}`,
    );
  });
  log(
    initialAuth.mode === "on"
      ? `auth on: audience "${initialAuth.audience}" from ${initialAuth.source}`
      : initialAuth.mode === "off"
        ? "auth off: no auth ConfigMap in nke-controller or cloud-workflow-engine"
        : `auth misconfigured: ${initialAuth.message}`,
  );
  const openApi = JSON.stringify(buildOpenApiDocument());
  const chaosQueue: ChaosMode[] = [];
  const context = (): ControllerContext => ({
    now: now(),
    timing,
    controlPlaneController: options.controlPlaneController ?? true,
    clustersNamespace,
    newId: randomUUID,
  });

  // ---- background work: transitions on time, kubeconfig Secrets in the site cluster
  let timer: NodeJS.Timeout | undefined;
  let reconciling: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let retryAt: number | undefined;
  // Every change to the state bumps `revision`; what depends on the state alone is kept per
  // revision, so that a read of a large list costs its page, not a pass over every cluster:
  // the clusters sorted by name, and when the next transition falls due (settle()).
  let revision = 0;
  let settled: { revision: number; dueAt: number | undefined } | undefined;
  let clustersByName: { revision: number; entries: SortedEntries<ClusterRecord> } | undefined;
  // Tenant API servers by cluster ID: the effect the state's transitions drive (planTenantApiServers).
  const tenants = new Map<string, { clusterName: string; server: TenantApiServer }>();
  const tenantBackend = options.tenantApiServers;

  const persist = () =>
    store
      .persist()
      .catch((error: unknown) => log(`cannot write state file ${store.path}: ${(error as Error).message}`));

  /** The cluster's tenant API server, started if need be; undefined when the cluster went meanwhile. */
  async function tenantFor(id: string, name: string): Promise<TenantApiServer | undefined> {
    const running = tenants.get(id);
    if (running !== undefined) return running.server;
    if (tenantBackend === undefined) return undefined;
    const started = performance.now();
    let server: TenantApiServer;
    try {
      server = await tenantBackend.start({ id, name });
    } catch (error) {
      throw new Error(`cannot start the tenant API server: ${(error as Error).message}`, { cause: error });
    }
    if (state.clusters[id] === undefined || stopped) {
      await server.stop();
      return undefined;
    }
    tenants.set(id, { clusterName: name, server });
    log(`tenant ${name}: API server at ${server.server} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    void server.exited.then(() => {
      // Died on its own (not stopped by us): forget it, and the next pass starts another.
      if (tenants.get(id)?.server !== server) return;
      tenants.delete(id);
      log(`tenant ${name}: API server exited; starting another`);
      if (!stopped) void reconcile();
    });
    return server;
  }

  async function writeSecret(id: string, record: ClusterRecord): Promise<boolean> {
    const { cluster } = record;
    const tenant = tenantBackend === undefined ? undefined : await tenantFor(id, cluster.name);
    if (tenantBackend !== undefined && tenant === undefined) return false;
    const server = tenant?.server ?? cluster.status.controlPlaneEndpoint ?? `https://${cluster.name}:6443`;
    const kubeconfig = await renderTenantKubeconfig({
      clusterName: cluster.name,
      clusterID: cluster.id,
      server,
      ...(tenant === undefined
        ? {}
        : { credentials: { caPem: tenant.caPem, certPem: tenant.certPem, keyPem: tenant.keyPem } }),
    });
    await site.writeKubeconfigSecret(clustersNamespace, cluster.name, kubeconfig);
    if (tenant !== undefined && state.clusters[id] === record) {
      cluster.status = { ...cluster.status, controlPlaneEndpoint: tenant.server };
    }
    return true;
  }

  /** Stops the servers of clusters that are gone; with `resume`, starts those of Ready clusters from an earlier run. */
  async function reconcileTenants(resume: boolean): Promise<boolean> {
    if (tenantBackend === undefined) return false;
    let changed = false;
    const plan = planTenantApiServers(state, new Set(tenants.keys()));
    for (const id of plan.stop) {
      const entry = tenants.get(id);
      tenants.delete(id);
      if (entry === undefined) continue;
      await entry.server.stop();
      log(`tenant ${entry.clusterName}: API server stopped (the cluster is gone)`);
    }
    // Ready clusters from an earlier run (state file) get a server again, and a Secret that names it.
    for (const id of resume ? plan.start : []) {
      if (stopped) break;
      const record = state.clusters[id];
      if (record?.kubeconfigSecret !== "written") continue;
      try {
        if (await writeSecret(id, record)) changed = true;
      } catch (error) {
        log(`tenant ${record.cluster.name}: ${(error as Error).message}; retrying`);
        retryAt = now() + TENANT_RETRY_MS;
      }
    }
    return changed;
  }

  async function reconcileOnce(): Promise<void> {
    let changed = advance(state, now(), timing);
    revision++;
    retryAt = undefined;
    if (await reconcileTenants(true)) changed = true;
    for (const name of [...state.secretsToDelete]) {
      // Stopping: what is left stays due, in the state file, for the next start.
      if (stopped) break;
      try {
        await site.deleteKubeconfigSecret(clustersNamespace, name);
        state.secretsToDelete = state.secretsToDelete.filter((n) => n !== name);
        changed = true;
      } catch (error) {
        log(`cannot delete Secret ${clustersNamespace}/${name}-kubeconfig: ${(error as Error).message}; retrying`);
        retryAt = now() + 1000;
      }
    }
    for (const [id, record] of Object.entries(state.clusters)) {
      if (stopped) break;
      if (record.kubeconfigSecret !== "pending" || record.cluster.status.phase !== "Provisioning") continue;
      const { cluster } = record;
      try {
        if (!(await writeSecret(id, record))) continue;
        if (state.clusters[id] === record && record.kubeconfigSecret === "pending") {
          record.kubeconfigSecret = "written";
          if (record.cluster.status.phase === "Provisioning") markReady(record, timing);
        }
        changed = true;
      } catch (error) {
        const message = `cannot write the kubeconfig Secret ${clustersNamespace}/${cluster.name}-kubeconfig: ${(error as Error).message}`;
        log(`${message}; retrying`);
        cluster.status = { ...cluster.status, message: `waiting: ${message}` };
        // Starting a tenant API server costs seconds: a failed start is not retried at once.
        retryAt = now() + (tenantBackend !== undefined && !tenants.has(id) ? TENANT_RETRY_MS : 1000);
      }
    }
    if (advance(state, now(), timing)) changed = true;
    // A cluster that went in this pass's last advance() gets its server stopped now, not on the next request.
    if (await reconcileTenants(false)) changed = true;
    revision++;
    // Stopping: stop() writes the state once, last.
    if (changed && !stopped) void persist();
  }

  function reconcile(): Promise<void> {
    if (reconciling !== undefined) {
      again = true;
      return reconciling;
    }
    reconciling = (async () => {
      try {
        do {
          again = false;
          await reconcileOnce();
        } while (again && !stopped);
      } finally {
        reconciling = undefined;
        schedule();
      }
    })();
    return reconciling;
  }

  function schedule(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (stopped) return;
    const candidates = [nextDueAt(state, timing), retryAt].filter((t): t is number => t !== undefined);
    const pending = Object.values(state.clusters).some(
      (r) => r.kubeconfigSecret === "pending" && r.cluster.status.phase === "Provisioning",
    );
    // A cluster can reach "gone" in reconcileOnce's last advance(), after its Secret loop ran:
    // work left in secretsToDelete must get a pass of its own, or the Secret would outlive it.
    const tenantWork =
      tenantBackend !== undefined &&
      (() => {
        const plan = planTenantApiServers(state, new Set(tenants.keys()));
        return plan.stop.length > 0 || plan.start.some((id) => state.clusters[id]?.kubeconfigSecret === "written");
      })();
    if ((pending || tenantWork || state.secretsToDelete.length > 0) && retryAt === undefined) candidates.push(now());
    if (candidates.length === 0) return;
    const delay = Math.min(Math.max(0, Math.min(...candidates) - now()), 2_147_483_647);
    timer = setTimeout(() => void reconcile(), delay);
    timer.unref();
  }

  /**
   * Before answering: bring the state to now, and let the reconciler pick up what fell due.
   * Nothing changes until the next transition is due unless the state changed meanwhile, so
   * that pass over every cluster runs once per change or due time, not on every request.
   */
  function settle(): void {
    if (settled?.revision === revision && (settled.dueAt === undefined || now() < settled.dueAt)) return;
    if (advance(state, now(), timing)) {
      revision++;
      void persist();
      void reconcile();
    }
    settled = { revision, dueAt: nextDueAt(state, timing) };
  }

  async function mutate<T>(operation: (ctx: ControllerContext) => T): Promise<T> {
    settle();
    revision++;
    const result = operation(context());
    // The answer waits for the state file, so what a client was told survives a restart.
    await store.persist();
    schedule();
    return result;
  }

  // ---- HTTP
  type Route = (req: IncomingMessage, params: string[], query: URLSearchParams) => Promise<[number, unknown]>;
  const routes = new Router<Route>();
  const route = (method: string, path: string, handle: Route) => routes.add(method, path, handle);
  const jsonBody = (req: IncomingMessage) => readJson(req, ["application/json"], refuse);
  const mergePatchBody = (req: IncomingMessage) =>
    readJson(req, [MERGE_PATCH_CONTENT_TYPE, "application/json"], refuse);

  const nameFilter = <T extends { name: string }>(items: T[], query: URLSearchParams) => {
    const name = query.get("name");
    return name === null ? items : items.filter((item) => item.name === name);
  };

  /** A cluster as served: with its conditions (the record is looked up again: it may have changed). */
  const served = (cluster: Cluster): Cluster => {
    const record = state.clusters[cluster.id];
    return record === undefined ? cluster : renderCluster(state, record);
  };

  route("GET", "/api/v1/clusters", async (_req, _params, query) => {
    settle();
    if (clustersByName?.revision !== revision) {
      clustersByName = {
        revision,
        entries: sortedByKey(Object.values(state.clusters), (record) => record.cluster.name),
      };
    }
    // Only the page is rendered: conditions look at the cluster's node pools.
    const page = paginateSorted(clustersByName.entries, query, query.get("name") ?? undefined);
    return [200, { ...page, items: page.items.map((record) => renderCluster(state, record)) }];
  });
  route("POST", "/api/v1/clusters", async (req) => {
    const body = await jsonBody(req);
    return [202, served(await mutate((ctx) => createCluster(state, body, ctx)))];
  });
  route("GET", "/api/v1/clusters/{id}", async (_req, [id = ""]) => {
    settle();
    return [200, renderCluster(state, getClusterRecord(state, id))];
  });
  route("PATCH", "/api/v1/clusters/{id}", async (req, [id = ""]) => {
    const body = await mergePatchBody(req);
    return [200, served(await mutate((ctx) => patchCluster(state, id, body, ctx)))];
  });
  route("DELETE", "/api/v1/clusters/{id}", async (_req, [id = ""]) => [
    202,
    served(await mutate((ctx) => deleteCluster(state, id, ctx))),
  ]);

  route("GET", "/api/v1/nodepools", async (_req, _params, query) => {
    settle();
    const clusterID = query.get("clusterID");
    if (clusterID !== null && state.clusters[clusterID] === undefined) throw notFound(`cluster ${clusterID} not found`);
    const records = Object.values(state.nodePools).filter(
      (record) => clusterID === null || record.pool.clusterID === clusterID,
    );
    const pools = nameFilter(
      records.map((record) => renderNodePool(state, record)),
      query,
    );
    return [200, paginate(pools, (pool) => `${pool.clusterName}\u0000${pool.name}`, query)];
  });
  route("POST", "/api/v1/nodepools", async (req) => {
    const body = await jsonBody(req);
    return [202, await mutate((ctx) => createNodePool(state, body, ctx))];
  });
  route("GET", "/api/v1/nodepools/{id}", async (_req, [id = ""]) => {
    settle();
    return [200, renderNodePool(state, getNodePoolRecord(state, id))];
  });
  route("PATCH", "/api/v1/nodepools/{id}", async (req, [id = ""]) => {
    const body = await mergePatchBody(req);
    return [200, await mutate((ctx) => patchNodePool(state, id, body, ctx))];
  });
  route("DELETE", "/api/v1/nodepools/{id}", async (_req, [id = ""]) => [
    202,
    await mutate((ctx) => deleteNodePool(state, id, ctx)),
  ]);

  const releaseKinds = [
    { path: "machineimages", noun: "machine image", map: () => state.machineImages, create: createMachineImage },
    {
      path: "clusterreleases",
      noun: "cluster release",
      map: () => state.clusterReleases,
      create: createClusterRelease,
    },
    {
      path: "nodepoolreleases",
      noun: "node pool release",
      map: () => state.nodePoolReleases,
      create: createNodePoolRelease,
    },
  ] as const;
  for (const kind of releaseKinds) {
    route("GET", `/api/v1/${kind.path}`, async (_req, _params, query) => {
      const items = nameFilter(Object.values(kind.map()) as Array<{ name: string }>, query);
      return [200, paginate(items, (item) => item.name, query)];
    });
    route("POST", `/api/v1/${kind.path}`, async (req) => {
      const body = await jsonBody(req);
      return [201, await mutate((ctx) => kind.create(state, body, ctx))];
    });
    route("GET", `/api/v1/${kind.path}/{id}`, async (_req, [id = ""]) => {
      const item = (kind.map() as Record<string, unknown>)[id];
      if (item === undefined) throw notFound(`${kind.noun} ${id} not found`);
      return [200, item];
    });
  }

  async function seed(seedOptions: SeedOptions): Promise<{ created: number }> {
    const prefix = seedOptions.namePrefix ?? "seed";
    const at = now();
    const release = Object.values(state.clusterReleases)[0];
    const taken = new Set(Object.values(state.clusters).map((record) => record.cluster.name));
    let created = 0;
    for (let n = 0; created < seedOptions.clusters; n++) {
      const name = `${prefix}-${n}`;
      if (taken.has(name)) continue;
      const id = randomUUID();
      state.clusters[id] = {
        createdMs: at - timing.provisionMs,
        readyMs: at,
        kubeconfigSecret: "skipped",
        cluster: {
          id,
          name,
          description: "seeded by the NVKE emulator",
          provider: "capd",
          clusterReleaseID: release?.id ?? "00000000-0000-4000-8000-000000000000",
          clusterReleaseName: release?.name ?? "seed",
          kubernetesVersion: release?.kubernetesVersion ?? "v1.31.4",
          controlPlaneConfig: { replicas: 1, nodeNamePrefix: `${name}-cp` },
          network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12", nodeCIDRMaskSize: 24 },
          infra: {
            machineTemplate: {
              apiVersion: "infrastructure.cluster.x-k8s.io/v1beta1",
              kind: "DockerMachineTemplate",
              spec: {},
            },
          },
          labels: { "nvke-emulator/seeded": "true" },
          status: {
            phase: "Ready",
            controlPlaneReady: true,
            controlPlaneEndpoint: `https://${name}.seed.tenants.nvke.internal:6443`,
          },
          createdAt: iso(at),
          updatedAt: iso(at),
        },
      };
      created++;
    }
    revision++;
    await store.persist();
    return { created };
  }

  const chaosModes: readonly ChaosMode[] = ["html500", "json500", "json503", "hang", "reset"];
  // Emulator-only (tests, the bench): not part of the controller's API.
  const controlRoutes = {
    "/_emulator/chaos": (body: Record<string, unknown>) => {
      const mode = body.mode as ChaosMode;
      const count = body.count === undefined ? 1 : Number(body.count);
      if (!chaosModes.includes(mode) || !Number.isInteger(count) || count < 1) {
        throw badRequest(`chaos takes {"mode": one of ${chaosModes.join(", ")}, "count"?: n ≥ 1}`);
      }
      for (let i = 0; i < count; i++) chaosQueue.push(mode);
      return { queued: chaosQueue.length };
    },
    "/_emulator/seed": (body: Record<string, unknown>) => {
      const clusters = Number(body.clusters);
      if (!Number.isInteger(clusters) || clusters < 1 || clusters > 100_000) {
        throw badRequest('seed takes {"clusters": n (1 to 100000), "namePrefix"?: string}');
      }
      return seed({ clusters, ...(typeof body.namePrefix === "string" ? { namePrefix: body.namePrefix } : {}) });
    },
  };

  async function handle(exchange: Exchange): Promise<void> {
    const chaos = chaosQueue.shift();
    if (chaos !== undefined) {
      answerChaos(exchange, chaos, (status) =>
        status === 500
          ? new ApiError(500, "internal error: emulated failure (chaos)")
          : new ApiError(503, "the controller is starting; try again shortly (chaos)"),
      );
      return;
    }
    if (serveInfoRoutes(exchange, openApi)) return;
    const { handler, params } = await routes.resolve(exchange, refuse, async () => {
      const user = await auth.authenticate(exchange.req.headers.authorization);
      if (user !== undefined) exchange.notes.push(`user=${user}`);
    });
    const [code, body] = await handler(exchange.req, params, exchange.url.searchParams);
    exchange.json(code, body);
  }

  const server = await startEmulatorServer({
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.host === undefined ? {} : { host: options.host }),
    log,
    refuse,
    control: { adminToken: options.adminToken, routes: controlRoutes },
    handle,
  });
  // Resume: anything that fell due while the emulator was down happens now.
  void reconcile();

  return {
    url: server.url,
    state,
    chaos(mode, count = 1) {
      for (let i = 0; i < count; i++) chaosQueue.push(mode);
    },
    seed,
    async reconcile() {
      await reconcile();
      while (reconciling !== undefined) await reconciling;
    },
    tenants() {
      return [...tenants.entries()].map(([clusterID, { clusterName, server }]) => ({
        clusterID,
        clusterName,
        server: server.server,
        pids: server.pids,
      }));
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await server.close();
      while (reconciling !== undefined) await reconciling.catch(() => {});
      const running = [...tenants.values()];
      tenants.clear();
      await Promise.all(running.map((entry) => entry.server.stop()));
      await store.persist();
    },
  };
}
