import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { goRuntimeEnv } from "@nodekit/test-utils";
import { binaries } from "./binaries.ts";
import { TestenvError } from "./errors.ts";
import { freePort, onFreePorts, portTakenLine } from "./ports.ts";
import { listensOn } from "./sockets.ts";
import { sleep, spawnWatchdog, stopChild } from "./supervisor.ts";

// Flux's source-controller and kustomize-controller (built by tooling/flux-testbin) as
// processes of this one, outside the cluster they reconcile: each reads a kubeconfig, binds
// its metrics and health endpoints to loopback ports of their own, leader election off, every
// namespace watched. source-controller serves the artifacts it fetched from a storage
// directory of its own on 127.0.0.1:PORT and advertises that address in each artifact's URL,
// where kustomize-controller downloads them: nothing leaves loopback. The cluster's Flux CRDs
// are the caller's to install (binaries("flux")/crds).

export interface FluxControllersOptions {
  /** The kubeconfig both controllers use (an admin's: they apply whatever the Kustomizations hold). */
  kubeconfig: string;
  /** Directory holding source-controller, kustomize-controller and crds/; default binaries("flux"). */
  binDir?: string;
  /** Where the artifacts and the logs go (kept); default a temporary directory, removed by stop(). */
  dataDir?: string;
  /**
   * How soon kustomize-controller looks again at a Kustomization whose dependencies are not
   * ready (its --requeue-dependency); default Flux's own, 30s.
   */
  requeueDependency?: string;
  /** How long each may take to answer its readiness probe; default 60 s. */
  readyTimeoutMs?: number;
  /**
   * Picks each loopback port (per controller: source-controller's storage, then metrics and
   * health); default one the kernel hands out. A port taken again before a controller binds
   * it makes that controller start again on new ones.
   */
  pickPort?: () => Promise<number>;
  /** Progress lines (a retry on new ports); default silent. */
  log?: (line: string) => void;
}

export interface FluxControllers {
  /** source-controller's artifact server: `127.0.0.1:PORT`. */
  readonly storageAddress: string;
  /** The last lines of a controller's log (JSON lines, as Flux logs). */
  log(name: "source-controller" | "kustomize-controller", lines?: number): string;
  /** Stops both (SIGTERM, then SIGKILL) and removes the data directory when it was a temporary one. */
  stop(): Promise<void>;
}

interface Controller {
  name: "source-controller" | "kustomize-controller";
  child: ChildProcess;
  logFile: string;
  healthPort: number;
  /**
   * Every port it was given (metrics, health, storage), which readiness waits for it to hold:
   * the probe can answer before the others are bound. source-controller starts its artifact
   * server only once the manager runs (main.go, after `<-mgr.Elected()`) and exits when that
   * bind fails ("artifact server error", os.Exit(1)).
   */
  ports: number[];
  /** The log's size when it was spawned: a retry appends to the same log. */
  logFrom: number;
}

const tail = (file: string, lines: number) => {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
};

const exited = (controller: Controller) => controller.child.exitCode !== null || controller.child.signalCode !== null;

async function ready(controller: Controller, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let waitingFor = `it to listen on ${controller.ports.map((port) => `127.0.0.1:${port}`).join(", ")}`;
  while (Date.now() < deadline) {
    if (exited(controller)) break;
    // Ask only once it holds every port it was given: until then another process may answer.
    const { pid } = controller.child;
    if (pid !== undefined && (await listensOn(pid, controller.ports))) {
      waitingFor = `its readiness probe on 127.0.0.1:${controller.healthPort} to answer 200`;
      const answer = await fetch(`http://127.0.0.1:${controller.healthPort}/readyz`, {
        signal: AbortSignal.timeout(2_000),
      }).catch(() => undefined);
      if (answer?.ok) return;
    }
    await sleep(200);
  }
  const { exitCode, signalCode } = controller.child;
  const why =
    exitCode !== null || signalCode !== null
      ? `it exited (${exitCode ?? signalCode})`
      : `it was still waiting for ${waitingFor} after ${timeoutMs / 1000} s`;
  throw new TestenvError(`${controller.name} did not become ready`, {
    why: `${why}; its log ends:\n${tail(controller.logFile, 15)}`,
    next: [`read ${controller.logFile}`],
  });
}

/**
 * Starts source-controller, then kustomize-controller, each once it listens on its ports and
 * its readiness probe answers.
 */
export async function startFluxControllers(options: FluxControllersOptions): Promise<FluxControllers> {
  const binDir = options.binDir ?? (await binaries("flux"));
  // The watchdog's directory (its pids file): it kills the controllers and removes the
  // directory if this process dies without stop(). The data directory, unless given.
  const runDir = await mkdtemp(join(tmpdir(), "nodekit-flux-"));
  const dataDir = options.dataDir ?? runDir;
  const storage = join(dataDir, "storage");
  await mkdir(storage, { recursive: true });
  const watchdog = spawnWatchdog(runDir, "flux-watchdog");
  const started: Controller[] = [];
  const pickPort = options.pickPort ?? freePort;
  const writePids = () => writeFile(join(runDir, "pids"), started.map((c) => `${c.child.pid} ${c.name}\n`).join(""));
  /** Spawns one controller on the ports it is given (storage, when it serves artifacts) and new ones. */
  const spawnController = async (name: Controller["name"], extra: string[], storagePort: number | undefined) => {
    const [metrics, health] = [await pickPort(), await pickPort()];
    const logFile = join(dataDir, `${name}.log`);
    const fd = openSync(logFile, "a");
    const logFrom = fstatSync(fd).size;
    // A /tmp of its own, as the upstream Deployments give each controller (an emptyDir
    // mounted at /tmp, config/manager/deployment.yaml): kustomize-controller removes every
    // kustomization-* directory in os.TempDir() when it starts (main.go, ListStaleTempDirs:
    // "leftovers of a previous process"), which on a shared /tmp were another controller's
    // builds in flight ("kustomize build failed: … evalsymlink failure on
    // '/tmp/kustomization-…'", a CI run with two tests reconciling at once).
    const tmp = join(dataDir, `${name}-tmp`);
    await mkdir(tmp, { recursive: true, mode: 0o700 });
    const child = spawn(
      join(binDir, name),
      [
        `--metrics-addr=127.0.0.1:${metrics}`,
        `--health-addr=127.0.0.1:${health}`,
        "--enable-leader-election=false",
        "--watch-all-namespaces=true",
        "--log-encoding=json",
        "--concurrent=4",
        ...extra,
      ],
      // No proxy: every address they dial is loopback (the API server, the registry, the storage).
      {
        stdio: ["ignore", fd, fd],
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: dataDir,
          TMPDIR: tmp,
          // controller-runtime reads the kubeconfig from here (neither controller has a --kubeconfig flag).
          KUBECONFIG: options.kubeconfig,
          RUNTIME_NAMESPACE: "flux-system",
          ...goRuntimeEnv(),
        },
      },
    );
    closeSync(fd);
    const ports = storagePort === undefined ? [metrics, health] : [metrics, health, storagePort];
    const controller: Controller = { name, child, logFile, healthPort: health, ports, logFrom };
    started.push(controller);
    await writePids();
    return controller;
  };
  /**
   * Starts one controller and waits until it is ready, on new ports when one it was given turned
   * out to be taken. `extra(storagePort)` gives its own flags; resolves to the storage port.
   */
  const start = async (name: Controller["name"], extra: (storagePort: number) => string[], serves = false) => {
    let controller: Controller | undefined; // the last try's, which taken() and the retry look at
    return onFreePorts(
      async () => {
        const storagePort = serves ? await pickPort() : 0;
        controller = await spawnController(name, extra(storagePort), serves ? storagePort : undefined);
        await ready(controller, options.readyTimeoutMs ?? 60_000);
        return storagePort;
      },
      () => (controller && exited(controller) ? portTakenLine(controller.logFile, controller.logFrom) : undefined),
      async (line) => {
        if (controller === undefined) return;
        started.splice(started.indexOf(controller), 1);
        await writePids();
        await stopChild(controller.child, 5_000);
        options.log?.(`${name} found a port taken (${line}); trying new ports`);
      },
    );
  };
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      for (const controller of started.reverse()) await stopChild(controller.child, 5_000);
      watchdog.dismiss();
      await rm(runDir, { recursive: true, force: true, maxRetries: 3 });
    })();
    return stopped;
  };
  let storageAddress = "";
  try {
    const storagePort = await start(
      "source-controller",
      (port) => [
        `--storage-path=${storage}`,
        `--storage-addr=127.0.0.1:${port}`,
        `--storage-adv-addr=127.0.0.1:${port}`,
      ],
      true,
    );
    storageAddress = `127.0.0.1:${storagePort}`;
    await start("kustomize-controller", () => [
      "--no-remote-bases=true",
      ...(options.requeueDependency === undefined ? [] : [`--requeue-dependency=${options.requeueDependency}`]),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    storageAddress,
    log: (name, lines = 30) => {
      const controller = started.find((c) => c.name === name);
      return controller === undefined ? "(not started)" : tail(controller.logFile, lines);
    },
    stop,
  };
}
