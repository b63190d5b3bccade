import type { Watch } from "@kubernetes/client-node";

// How a test-only controller stand-in follows the cluster the way a controller's informers do:
// it watches the collections it cares about and reconciles when one of them changes, so an
// idle cluster costs it (and its kube-apiserver) nothing and no change waits for a timer. A
// stand-in that listed everything every few hundred milliseconds instead kept a kube-apiserver
// and a node process busy for as long as a test ran (issue 25).

/** The CRDs' collection: a resource type that is not served yet is watched again once a CRD changes. */
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/**
 * How long the API server keeps one watch open (`timeoutSeconds`). client-node's Watch aborts a
 * watch that has sent nothing for 30 s (its private `requestTimeoutMs`), which on an idle
 * cluster ended every watch every 30 s with a timeout. Under that, the server ends the watch
 * itself, after the bookmark it sends 2 s before the deadline to a watch that asked for
 * bookmarks (k8s.io/apiserver cacher.go, `nextBookmarkTime`), and the next watch resumes from
 * it: no LIST, no pass, as client-go's reflector resumes (docs: "Efficient detection of
 * changes", kubernetes.io/docs/reference/using-api/api-concepts/#watch-bookmarks).
 */
const WATCH_SECONDS = 25;

export interface ReconcileOnChangeOptions {
  /** The cluster's watch (client-node's Watch over the stand-in's kubeconfig). */
  watch: Watch | Promise<Watch>;
  /** The collections (API paths) whose every event is reconciled, as a controller's informers. */
  paths: readonly string[];
  /** One pass over everything the stand-in keeps: true when done; thrown or false, it failed and is tried again. */
  reconcile: () => Promise<boolean>;
  /**
   * How soon a failed pass, or a watch that could not start or broke, is tried again
   * (default 300 ms, as a test wants it; the sandbox waits longer).
   */
  retryMs?: number;
  /**
   * A pass this long after the last one even when nothing changed, as an informer's resync
   * period (default: none). For a stand-in whose controller also acts on time, such as a
   * credential check repeated every few minutes.
   */
  resyncMs?: number;
  /** How long the server keeps one watch open before it is resumed (default 25 s; tests shorten it). */
  watchSeconds?: number;
}

export interface Reconciler {
  /** Runs one pass now (tests that want a deterministic step); its failure is the caller's. */
  reconcile(): Promise<void>;
  /** Stops watching; resolves when the pass under way has finished, so nothing writes after it. */
  stop(): Promise<void>;
}

/**
 * Starts a stand-in's reconciliation: one pass at once, then one after each change to
 * `paths` (changes that arrive during a pass are reconciled once more after it) and one once
 * each watch has begun afresh. A watch that ends resumes from the last resource version it saw
 * (an event's or a bookmark's), so nothing is missed and no pass is needed; one whose version
 * the server no longer has (410 Gone) starts afresh, and what changed meanwhile is reconciled.
 * A watch the API refuses with 404 (its CRD not served yet) starts again when a CRD changes.
 */
export function reconcileOnChange(options: ReconcileOnChangeOptions): Reconciler {
  const retryMs = options.retryMs ?? 300;
  let stopped = false;
  const watches = new Set<AbortController>();
  const timers = new Set<NodeJS.Timeout>();
  const later = (fn: () => void, ms: number): NodeJS.Timeout => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    return timer;
  };
  /** The resync after the last pass: one at a time, moved on by every pass. */
  let resync: NodeJS.Timeout | undefined;
  const pass = async (): Promise<boolean> => {
    try {
      return await options.reconcile();
    } catch {
      return false;
    }
  };

  let running: Promise<void> | undefined;
  let again = false;
  const schedule = () => {
    if (stopped) return;
    if (running !== undefined) {
      again = true;
      return;
    }
    running = (async () => {
      let ok = true;
      do {
        again = false;
        ok = await pass();
      } while (again && !stopped);
      running = undefined;
      if (stopped) return;
      if (!ok) later(schedule, retryMs);
      else if (options.resyncMs !== undefined) {
        if (resync !== undefined) {
          clearTimeout(resync);
          timers.delete(resync);
        }
        resync = later(schedule, options.resyncMs);
      }
    })();
  };

  /** Paths whose watch the API refused with 404: started again on a CRD event. */
  const unserved = new Set<string>();
  let watchingCrds = false;
  /** The resource version each path's watch resumes from: the last event's or bookmark's. */
  const resumeFrom = new Map<string, string>();
  const onEvent = (path: string) => (type: string, object: unknown) => {
    const version = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
    if (type === "ERROR") {
      // 410 Gone (the version is older than the server keeps), or another failure the stream
      // reports before it ends: the next watch starts afresh.
      resumeFrom.delete(path);
      return;
    }
    if (typeof version === "string" && version !== "") resumeFrom.set(path, version);
    if (type === "BOOKMARK") return;
    schedule();
    if (path !== CRDS) return;
    for (const waiting of unserved) {
      unserved.delete(waiting);
      void follow(waiting);
    }
  };
  /** Watches `path` for as long as the stand-in runs, reconciling on each event; started again when it ends. */
  const follow = async (path: string): Promise<void> => {
    if (stopped) return;
    if (path === CRDS) watchingCrds = true;
    const started = performance.now();
    const resumed = resumeFrom.get(path);
    let ended = false;
    let controller: AbortController | undefined;
    const restart = (error: unknown) => {
      ended = true;
      if (controller !== undefined) watches.delete(controller);
      if (stopped) return;
      const status = (error as { statusCode?: number } | null)?.statusCode;
      if (status === 410) resumeFrom.delete(path);
      // A watch that resumes misses nothing; one that starts afresh is followed by a pass.
      if (!resumeFrom.has(path)) schedule();
      // A type not served yet waits for a CRD event (and a retry ten intervals on, for a CRD
      // event that beat the 404 here); a watch that failed, or lasted under a second, is tried
      // again after the interval; one that ended (the server's timeout), at once.
      if (status === 404) {
        unserved.add(path);
        if (!watchingCrds) void follow(CRDS);
        later(() => {
          if (unserved.delete(path)) void follow(path);
        }, 10 * retryMs);
      } else later(() => void follow(path), error || performance.now() - started < 1_000 ? retryMs : 0);
    };
    const query = {
      allowWatchBookmarks: true,
      timeoutSeconds: options.watchSeconds ?? WATCH_SECONDS,
      ...(resumed === undefined ? {} : { resourceVersion: resumed }),
    };
    try {
      controller = await (await options.watch).watch(path, query, onEvent(path), restart);
    } catch (error) {
      restart(error);
      return;
    }
    if (ended || stopped) controller.abort();
    else {
      watches.add(controller);
      // A fresh watch starts at "now" and replays only what exists, as ADDED events: an object
      // deleted after the last pass listed and before the watch began sends none, so a pass
      // follows every watch that begins afresh (as an informer lists before it watches). One
      // that resumes is sent every change since its version, deletions included.
      if (resumed === undefined) schedule();
    }
  };

  schedule();
  for (const path of options.paths) void follow(path);
  return {
    reconcile: async () => {
      await options.reconcile();
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const controller of watches) controller.abort();
      watches.clear();
      await running;
    },
  };
}
