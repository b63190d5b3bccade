import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, closeSync, openSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { binaries } from "./binaries.ts";
import { buildOnce, cacheRoot } from "./cache.ts";
import { type ApiResponse, apiRequest, type ControlPlaneClient, connectControlPlane } from "./client.ts";
import { TestenvError } from "./errors.ts";
import { renderKubeconfig } from "./kubeconfig.ts";
import {
  createCertificateAuthority,
  createSigningKeyPair,
  issueClientCertificate,
  issueServingCertificate,
} from "./pki.ts";
import { freePort, onFreePorts, portTakenLine } from "./ports.ts";
import { spawnWatchdog, stopChild } from "./supervisor.ts";

export interface StartControlPlaneOptions {
  /** Directory holding kube-apiserver and etcd; default: `binaries("kubernetes")` (the runner's, or ensure.sh's). */
  binDir?: string;
  /** Where certificates, etcd data, kubeconfigs and logs go; default: a new temp dir. Removed by stop(). */
  dataDir?: string;
  /** Progress lines (binary build, ports, timings). Default: silent. */
  log?: (line: string) => void;
  /** How long to wait for /readyz; default 60 s. */
  readyTimeoutMs?: number;
  /** Where NODEKIT_TESTENV_BIN_DIR is read, and ensure.sh's environment; default process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * Picks each loopback port (etcd client, etcd peer, kube-apiserver); default: one the kernel
   * hands out. A port taken again before a daemon binds it makes start-up retry with new ones.
   */
  pickPort?: () => Promise<number>;
  /**
   * The Services' ClusterIP range (`--service-cluster-ip-range`); default 10.0.0.0/24. The
   * sandbox's agent cluster serves k3s's default, 10.43.0.0/16, as the cluster nr registers would.
   */
  serviceClusterIpRange?: string;
  /**
   * Start etcd from a copy of its data as kube-apiserver's first start left it (its RBAC
   * roles, flow-control objects and system namespaces), kept in the nodekit cache; default
   * true. See etcdSeed().
   */
  etcdSeed?: boolean;
}

export interface StartupTimings {
  /** Finding the binaries (the runner's: none; ensure.sh on a warm cache: a few hundred ms; cold: tens of minutes), and building the etcd seed the first time (a start of its own). */
  binariesMs: number;
  /** Certificates and keys. */
  pkiMs: number;
  /** From spawning etcd to kube-apiserver's /readyz answering 200. */
  readyMs: number;
  /** Spawning etcd to /readyz plus certificates: the warm start, binaries excluded. */
  totalMs: number;
}

export interface ControlPlane extends ControlPlaneClient {
  readonly dataDir: string;
  readonly pids: { etcd: number; kubeApiserver: number };
  readonly timings: StartupTimings;
  /** The cached etcd data this plane started from (see `etcdSeed` in the options); undefined: from empty data. */
  readonly etcdSeed: string | undefined;
  /** Settles when etcd or kube-apiserver exits, for whatever reason (stop() included): its name. */
  readonly exited: Promise<string>;
  /** Stops kube-apiserver and etcd and removes dataDir. Safe to call twice. */
  stop(): Promise<void>;
}

interface ControlPlaneLayout {
  pkiDir: string;
  etcdDir: string;
  logDir: string;
  kubeconfigDir: string;
  adminKubeconfigPath: string;
  pidsFile: string;
}

function controlPlaneLayout(dataDir: string): ControlPlaneLayout {
  return {
    pkiDir: join(dataDir, "pki"),
    etcdDir: join(dataDir, "etcd"),
    logDir: join(dataDir, "logs"),
    kubeconfigDir: join(dataDir, "kubeconfigs"),
    adminKubeconfigPath: join(dataDir, "admin.kubeconfig"),
    pidsFile: join(dataDir, "pids"),
  };
}

interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
}

/** etcd's command line: one member on loopback, no fsync (the data is thrown away). */
function etcdArgs(dir: string, ports: Ports): string[] {
  const client = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return [
    "--name=testenv",
    `--data-dir=${dir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=testenv=${peer}`,
    "--initial-cluster-state=new",
    "--unsafe-no-fsync=true",
    "--log-level=warn",
  ];
}

/** kube-apiserver's command line, envtest-style, with RBAC and client-certificate users. */
function kubeApiserverArgs(layout: ControlPlaneLayout, ports: Ports, serviceRange = "10.0.0.0/24"): string[] {
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const pki = (name: string) => join(layout.pkiDir, name);
  return [
    "--advertise-address=127.0.0.1",
    "--bind-address=127.0.0.1",
    `--secure-port=${ports.apiserver}`,
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    `--cert-dir=${layout.pkiDir}`,
    `--tls-cert-file=${pki("apiserver.crt")}`,
    `--tls-private-key-file=${pki("apiserver.key")}`,
    `--client-ca-file=${pki("ca.crt")}`,
    "--authorization-mode=RBAC",
    `--service-account-issuer=${server}`,
    `--api-audiences=${server}`,
    `--service-account-key-file=${pki("sa.pub")}`,
    `--service-account-signing-key-file=${pki("sa.key")}`,
    `--service-cluster-ip-range=${serviceRange}`,
    "--allow-privileged=true",
    // No controller-manager runs, so no namespace gets a `default` ServiceAccount; without
    // this, the ServiceAccount admission plugin would reject every Pod.
    "--disable-admission-plugins=ServiceAccount",
    // A Service-backed admission webhook, CRD conversion webhook or APIService is then reached
    // through the Service's endpoints (none exist without a controller-manager: "no endpoints
    // available"), never through its ClusterIP, which would leave loopback.
    "--enable-aggregator-routing=true",
    "--profiling=false",
    // Periodic work that only a long-lived, multi-member control plane needs, off: the
    // `kubernetes` Service's endpoints (a lease rewritten every 10 s), the API server's own
    // identity lease (renewed every 10 s), and its polls of etcd's size and object counts.
    // An idle plane costs ≈ 16 % less CPU without them (kube-apiserver and etcd, 120 s idle,
    // GOMAXPROCS=1: 1.60 → 1.35 CPU-s); the APIs the tests use are the same.
    "--endpoint-reconciler-type=none",
    "--feature-gates=APIServerIdentity=false",
    "--etcd-db-metric-poll-interval=0",
    "--etcd-count-metric-poll-period=0",
  ];
}

/**
 * `from`'s contents into `to`, holes kept: etcd's write-ahead log is a 64 MB file, preallocated
 * and nearly all zeros, which a plain copy writes out in full (node's `cp` does: 70 ms of
 * CPU, against 5 ms for GNU cp's sparse copy). Where `cp` has no `--sparse` (busybox, BSD), a plain copy.
 */
async function copySparse(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  try {
    await promisify(execFile)("cp", ["-a", "--sparse=always", `${from}/.`, to]);
  } catch {
    await cp(from, to, { recursive: true, force: true });
  }
}

interface Daemon {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<void>;
}

/**
 * The Go garbage collector's settings for a throwaway control plane, unless the environment
 * sets its own: collect at 5× the live heap rather than 2×, softly capped at 1 GiB. With
 * Go's default, kube-apiserver spent a fifth of its CPU collecting in the test suite (the
 * largest single consumer after Node: 215 of one run's 1,046 CPU-s, by process accounting);
 * with these (163 CPU-s in the next run), its start
 * costs ≈ 20 % less and applying and deleting Cluster API's CRDs ≈ 30 % less, for a peak of
 * ≈ 350 MB rather than 256 MB at start and under 1 GiB rather than 600 MB with those CRDs.
 */
function daemonGcEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GOGC: env.GOGC ?? "400", GOMEMLIMIT: env.GOMEMLIMIT ?? "1GiB" };
}

function spawnDaemon(name: string, bin: string, args: string[], logFile: string): Daemon {
  const fd = openSync(logFile, "a");
  const child = spawn(bin, args, { stdio: ["ignore", fd, fd], env: daemonGcEnv() });
  closeSync(fd);
  const exited = new Promise<void>((resolvePromise) => {
    child.once("exit", () => resolvePromise());
    child.once("error", (error) => {
      appendFileSync(logFile, `\n${error.message}\n`);
      resolvePromise();
    });
  });
  return { name, child, logFile, exited };
}

function alive(daemon: Daemon): boolean {
  return daemon.child.exitCode === null && daemon.child.signalCode === null && daemon.child.pid !== undefined;
}

function logTail(daemon: Daemon, lines = 20): string {
  try {
    return readFileSync(daemon.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

async function terminate(daemon: Daemon, graceMs: number): Promise<void> {
  if (alive(daemon)) await stopChild(daemon.child, graceMs);
}

/** "NAME found a port taken (LINE)" for a daemon that exited because a port it was given was taken. */
function portTaken(daemons: Daemon[]): string | undefined {
  for (const daemon of daemons) {
    const line = alive(daemon) ? undefined : portTakenLine(daemon.logFile);
    if (line !== undefined) return `${daemon.name} found a port taken (${line})`;
  }
  return undefined;
}

async function waitForReady(
  server: string,
  tls: { ca: string; cert: string; key: string },
  daemons: Daemon[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: ApiResponse | Error | undefined;
  while (Date.now() < deadline) {
    const dead = daemons.find((daemon) => !alive(daemon));
    if (dead) {
      throw new TestenvError(`${dead.name} exited during start-up`, {
        why: `last lines of ${dead.logFile}:\n${logTail(dead)}`,
      });
    }
    try {
      last = await apiRequest(server, tls, "GET", "/readyz", undefined, 2_000);
      if (last.status === 200) return;
    } catch (error) {
      last = error as Error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const detail = last instanceof Error ? last.message : last ? `HTTP ${last.status}: ${last.body.slice(0, 2000)}` : "";
  const apiserver = daemons.find((daemon) => daemon.name === "kube-apiserver");
  throw new TestenvError(`kube-apiserver was not ready within ${timeoutMs / 1000} s`, {
    why: `last /readyz answer: ${detail}${apiserver ? `\nlast lines of ${apiserver.logFile}:\n${logTail(apiserver)}` : ""}`,
  });
}

/**
 * Starts etcd and kube-apiserver on free loopback ports with a throwaway CA, RBAC and a
 * service-account issuer, and resolves once /readyz answers. Both processes are stopped
 * by stop(), on this process's exit or SIGINT/SIGTERM/SIGHUP, and by a watchdog if this
 * process is killed outright.
 */
export function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  return launch(options);
}

/** Bump when what a seed holds changes in a way its key (the binaries, both command lines) does not show. */
const SEED_REVISION = 1;

/**
 * etcd's data as kube-apiserver's first start leaves it, built once per pair of binaries and
 * command lines into the nodekit cache (`testenv/etcd-seed-*`, sparse: under 1 MB on disk).
 * A plane started from a copy of it skips the bootstrap writes (RBAC roles and bindings,
 * flow-control objects, priority classes, system namespaces) and only reads them back, as a
 * real control plane does on each restart: kube-apiserver took ≈ 0.4 CPU-s and etcd ≈ 0.1 less
 * to /readyz (1.45–1.70 → 1.15–1.23 and 0.24–0.32 → 0.16–0.21 CPU-s, six starts each,
 * interleaved), and /readyz came 0.2–0.8 s sooner. The suite starts about 70 planes.
 */
async function etcdSeed(binDir: string, options: StartControlPlaneOptions): Promise<string> {
  const identity = await Promise.all(
    ["etcd", "kube-apiserver"].map(async (name) => {
      const path = await realpath(join(binDir, name));
      const { size, mtimeMs } = await stat(path);
      return [path, size, mtimeMs];
    }),
  );
  const anyPorts: Ports = { etcdClient: 0, etcdPeer: 0, apiserver: 0 };
  const commandLines = [
    etcdArgs("/", anyPorts),
    kubeApiserverArgs(controlPlaneLayout("/"), anyPorts, options.serviceClusterIpRange),
  ];
  const key = createHash("sha256")
    .update(JSON.stringify([SEED_REVISION, identity, commandLines]))
    .digest("hex")
    .slice(0, 16);
  const dir = await buildOnce(join(cacheRoot(options.env), "testenv", `etcd-seed-${key}`), async (tmp) => {
    options.log?.(`etcd seed ${key}: not in the cache yet; one start to make it`);
    const plane = await launch(
      {
        ...options,
        binDir,
        dataDir: join(tmp, "plane"),
        etcdSeed: false,
        log: () => {},
      },
      join(tmp, "etcd"),
    );
    await bootstrapped(plane);
    await plane.stop();
  });
  return join(dir, "etcd");
}

/**
 * A seed that cannot be kept (a cache directory that cannot be written: a read-only HOME) is no
 * reason to fail a start: it starts from empty data, as before seeds. A plane that failed to
 * start while making the seed (TestenvError) would fail the same way again, so that is thrown.
 */
function withoutSeed(log: (line: string) => void): (error: unknown) => undefined {
  return (error) => {
    if (error instanceof TestenvError) throw error;
    log(`etcd seed: not kept (${error instanceof Error ? error.message : String(error)}); starting from empty data`);
    return undefined;
  };
}

/**
 * Waits for what kube-apiserver's bootstrap controller writes after /readyz already answers:
 * the system namespaces and the `kubernetes` Service (its last objects). A seed taken earlier
 * still works; the plane started from it writes the rest itself.
 */
async function bootstrapped(plane: ControlPlane): Promise<void> {
  const pki = (name: string) => readFileSync(join(plane.info.pkiDir, name), "utf8");
  const tls = { ca: plane.caPem, cert: pki("admin.crt"), key: pki("admin.key") };
  const last = ["/api/v1/namespaces/kube-node-lease", "/api/v1/namespaces/default/services/kubernetes"];
  for (let attempt = 0; attempt < 50; attempt++) {
    const answers = await Promise.all(last.map((path) => apiRequest(plane.server, tls, "GET", path, undefined, 2_000)));
    if (answers.every((answer) => answer.status === 200)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** startControlPlane; `keepEtcdIn`: on stop(), a ready plane's etcd data is copied there first. */
async function launch(options: StartControlPlaneOptions, keepEtcdIn?: string): Promise<ControlPlane> {
  const log = options.log ?? (() => {});
  const t0 = performance.now();
  const binDir = await binaries("kubernetes", {
    ...(options.binDir === undefined ? {} : { binDir: options.binDir }),
    ...(options.env === undefined ? {} : { env: options.env }),
    log: (line) => log(line),
  });
  const seed = options.etcdSeed === false ? undefined : await etcdSeed(binDir, options).catch(withoutSeed(log));
  const t1 = performance.now();

  const dataDir = options.dataDir ? resolve(options.dataDir) : await mkdtemp(join(tmpdir(), "nodekit-testenv-"));
  const layout = controlPlaneLayout(dataDir);
  await Promise.all(
    [layout.pkiDir, layout.etcdDir, layout.logDir, layout.kubeconfigDir].map((dir) =>
      mkdir(dir, { recursive: true, mode: 0o700 }),
    ),
  );
  // Kills the daemons and removes dataDir if this process is killed outright.
  const watchdog = spawnWatchdog(dataDir, "testenv-watchdog");

  const daemons: Daemon[] = [];
  const killNow = () => {
    for (const daemon of daemons) if (alive(daemon)) daemon.child.kill("SIGTERM");
  };
  const onExit = () => killNow();
  const onSignal = (signal: NodeJS.Signals) => {
    killNow();
    removeHandlers();
    // Re-raise when nobody else handles it, so the process still dies of the signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  function removeHandlers() {
    process.off("exit", onExit);
    for (const signal of signals) process.off(signal, onSignal);
  }
  process.on("exit", onExit);
  for (const signal of signals) process.on(signal, onSignal);

  let ready = false;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      removeHandlers();
      const [etcd, apiserver] = daemons;
      if (apiserver) await terminate(apiserver, 5_000);
      if (etcd) await terminate(etcd, 3_000);
      if (keepEtcdIn !== undefined && ready) await copySparse(layout.etcdDir, keepEtcdIn);
      watchdog.dismiss();
      await rm(dataDir, { recursive: true, force: true, maxRetries: 3 });
    })();
    return stopped;
  };

  try {
    const ca = await createCertificateAuthority();
    const [serving, admin, sa] = await Promise.all([
      issueServingCertificate(ca),
      issueClientCertificate(ca, { user: "admin", groups: ["system:masters"] }),
      createSigningKeyPair(),
    ]);
    const files: Record<string, string> = {
      "ca.crt": ca.certPem,
      "ca.key": ca.keyPem,
      "apiserver.crt": serving.certPem,
      "apiserver.key": serving.keyPem,
      "admin.crt": admin.certPem,
      "admin.key": admin.keyPem,
      "sa.key": sa.privateKeyPem,
      "sa.pub": sa.publicKeyPem,
    };
    await Promise.all(
      Object.entries(files).map(([name, pem]) => writeFile(join(layout.pkiDir, name), pem, { mode: 0o600 })),
    );
    const t2 = performance.now();

    const pickPort = options.pickPort ?? freePort;
    const ports = await onFreePorts(
      async () => {
        const candidate: Ports = {
          etcdClient: await pickPort(),
          etcdPeer: await pickPort(),
          apiserver: await pickPort(),
        };
        log(
          `etcd on 127.0.0.1:${candidate.etcdClient}, kube-apiserver on https://127.0.0.1:${candidate.apiserver}, data in ${dataDir}`,
        );
        const logs = { etcd: join(layout.logDir, "etcd.log"), apiserver: join(layout.logDir, "kube-apiserver.log") };
        await Promise.all(Object.values(logs).map((file) => writeFile(file, "")));
        if (seed !== undefined) await copySparse(seed, layout.etcdDir);
        daemons.push(spawnDaemon("etcd", join(binDir, "etcd"), etcdArgs(layout.etcdDir, candidate), logs.etcd));
        daemons.push(
          spawnDaemon(
            "kube-apiserver",
            join(binDir, "kube-apiserver"),
            kubeApiserverArgs(layout, candidate, options.serviceClusterIpRange),
            logs.apiserver,
          ),
        );
        await writeFile(layout.pidsFile, daemons.map((daemon) => `${daemon.child.pid} ${daemon.name}\n`).join(""));
        await waitForReady(
          `https://127.0.0.1:${candidate.apiserver}`,
          { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem },
          daemons,
          options.readyTimeoutMs ?? 60_000,
        );
        return candidate;
      },
      () => portTaken(daemons),
      async (line) => {
        log(`${line}; trying new ports`);
        for (const daemon of daemons.splice(0).reverse()) await terminate(daemon, 3_000);
        await rm(layout.etcdDir, { recursive: true, force: true });
        await mkdir(layout.etcdDir, { recursive: true, mode: 0o700 });
      },
    );
    const server = `https://127.0.0.1:${ports.apiserver}`;
    const [etcd, apiserver] = daemons;
    if (etcd === undefined || apiserver === undefined) throw new Error("unreachable: both daemons were started");
    const t3 = performance.now();

    await writeFile(
      layout.adminKubeconfigPath,
      renderKubeconfig({ server, caPem: ca.certPem, name: "admin", certPem: admin.certPem, keyPem: admin.keyPem }),
      { mode: 0o600 },
    );
    const pids = { etcd: etcd.child.pid ?? 0, kubeApiserver: apiserver.child.pid ?? 0 };
    const client = await connectControlPlane({
      server,
      pids,
      binDir,
      adminKubeconfigPath: layout.adminKubeconfigPath,
      kubeconfigDir: layout.kubeconfigDir,
      pkiDir: layout.pkiDir,
      logDir: layout.logDir,
    });
    const timings: StartupTimings = {
      binariesMs: Math.round(t1 - t0),
      pkiMs: Math.round(t2 - t1),
      readyMs: Math.round(t3 - t2),
      totalMs: Math.round(t3 - t1),
    };
    ready = true;
    log(
      `ready at ${server} in ${(timings.totalMs / 1000).toFixed(1)} s (certificates ${timings.pkiMs} ms, etcd + kube-apiserver to /readyz ${(timings.readyMs / 1000).toFixed(1)} s; the binaries ${(timings.binariesMs / 1000).toFixed(1)} s before that)`,
    );
    return {
      ...client,
      dataDir,
      pids,
      timings,
      etcdSeed: seed,
      exited: Promise.race(daemons.map((daemon) => daemon.exited.then(() => daemon.name))),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
