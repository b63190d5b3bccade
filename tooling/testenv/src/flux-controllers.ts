import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { appendFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { goRuntimeEnv } from "@nodekit/test-utils";
import { binaries } from "./binaries.ts";
import { freePort } from "./control-plane.ts";
import { TestenvError } from "./errors.ts";
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
}

const tail = (file: string, lines: number) => {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
};

async function ready(controller: Controller, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (controller.child.exitCode !== null || controller.child.signalCode !== null) break;
    const answer = await fetch(`http://127.0.0.1:${controller.healthPort}/readyz`).catch(() => undefined);
    if (answer?.ok) return;
    await sleep(200);
  }
  const { exitCode, signalCode } = controller.child;
  const why =
    exitCode !== null || signalCode !== null
      ? `it exited (${exitCode ?? signalCode})`
      : `its readiness probe on 127.0.0.1:${controller.healthPort} did not answer 200 in ${timeoutMs / 1000} s`;
  throw new TestenvError(`${controller.name} did not become ready`, {
    why: `${why}; its log ends:\n${tail(controller.logFile, 15)}`,
    next: [`read ${controller.logFile}`],
  });
}

/** Starts source-controller, then kustomize-controller, each once its readiness probe answers. */
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
  const start = async (name: Controller["name"], extra: string[]) => {
    const [metrics, health] = [await freePort(), await freePort()];
    const logFile = join(dataDir, `${name}.log`);
    const fd = openSync(logFile, "a");
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
    const controller: Controller = { name, child, logFile, healthPort: health };
    started.push(controller);
    await appendFile(join(runDir, "pids"), `${child.pid} ${name}\n`);
    await ready(controller, options.readyTimeoutMs ?? 60_000);
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
  const storagePort = await freePort();
  const storageAddress = `127.0.0.1:${storagePort}`;
  try {
    await start("source-controller", [
      `--storage-path=${storage}`,
      `--storage-addr=${storageAddress}`,
      `--storage-adv-addr=${storageAddress}`,
    ]);
    await start("kustomize-controller", [
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
