import type { Watch } from "@kubernetes/client-node";
import { expect, test, vi } from "vitest";
import { reconcileOnChange } from "./reconcile-on-change.ts";

// A watch that begins when the test says so, and whose events the test sends: what a real
// kube-apiserver's watch does, with its timing in the test's hands.
function controlledWatch() {
  let begin: () => void = () => {};
  const begun = new Promise<void>((resolve) => {
    begin = resolve;
  });
  const events: Array<() => void> = [];
  const watch = {
    async watch(_path: string, _query: object, onEvent: () => void) {
      await begun;
      events.push(onEvent);
      return new AbortController();
    },
  } as unknown as Watch;
  const send = () => {
    for (const event of events) event();
  };
  return { watch, begin, watching: () => events.length, send };
}

test("a change made before the watch began, which sends no event, is reconciled once it begins", async () => {
  const cluster = { objects: 0, reconciled: -1 };
  const { watch, begin } = controlledWatch();
  const reconciler = reconcileOnChange({
    watch,
    paths: ["/apis/apps/v1/deployments"],
    reconcile: async () => {
      cluster.reconciled = cluster.objects;
      return true;
    },
  });
  try {
    await vi.waitFor(() => expect(cluster.reconciled).toBe(0));
    // Created after the first pass listed, before the watch began ("now"): no event for it.
    cluster.objects = 1;
    begin();
    await vi.waitFor(() => expect(cluster.reconciled).toBe(1));
  } finally {
    await reconciler.stop();
  }
});

test("each event is reconciled; none after stop", async () => {
  const cluster = { objects: 0, reconciled: -1, passes: 0 };
  const { watch, begin, watching, send } = controlledWatch();
  const reconciler = reconcileOnChange({
    watch,
    paths: ["/apis/apps/v1/deployments"],
    reconcile: async () => {
      cluster.passes += 1;
      cluster.reconciled = cluster.objects;
      return true;
    },
  });
  begin();
  await vi.waitFor(() => expect(watching()).toBe(1));
  await vi.waitFor(() => expect(cluster.reconciled).toBe(0));
  cluster.objects = 2;
  send();
  await vi.waitFor(() => expect(cluster.reconciled).toBe(2));
  await reconciler.stop();
  const passes = cluster.passes;
  cluster.objects = 3;
  send();
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(cluster.passes).toBe(passes);
  expect(cluster.reconciled).toBe(2);
});

test("resyncMs: a pass that long after the last, with no event; none after stop", async () => {
  const cluster = { passes: 0 };
  const { watch, begin, watching } = controlledWatch();
  const reconciler = reconcileOnChange({
    watch,
    paths: ["/apis/infrastructure.cluster.x-k8s.io/v1beta1/nicoidentities"],
    reconcile: async () => {
      cluster.passes += 1;
      return true;
    },
    resyncMs: 40,
  });
  begin();
  await vi.waitFor(() => expect(watching()).toBe(1));
  // The first pass, the one after the watch began, then resyncs without any event.
  await vi.waitFor(() => expect(cluster.passes).toBeGreaterThanOrEqual(4));
  await reconciler.stop();
  const passes = cluster.passes;
  await new Promise((resolve) => setTimeout(resolve, 120));
  expect(cluster.passes).toBe(passes);
});

test("a watch that ends resumes from the last version it saw, with no pass; one too old (410) starts afresh, with a pass", async () => {
  const queries: Array<Record<string, unknown>> = [];
  let current: { onEvent: (type: string, object: unknown) => void; end: (error: unknown) => void } | undefined;
  const watch = {
    async watch(
      _path: string,
      query: Record<string, unknown>,
      onEvent: (type: string, object: unknown) => void,
      end: (error: unknown) => void,
    ) {
      queries.push(query);
      current = { onEvent, end };
      return new AbortController();
    },
  } as unknown as Watch;
  let passes = 0;
  const reconciler = reconcileOnChange({
    watch,
    paths: ["/apis/apps/v1/deployments"],
    reconcile: async () => {
      passes += 1;
      return true;
    },
    retryMs: 10,
  });
  try {
    await vi.waitFor(() => expect(queries).toHaveLength(1));
    expect(queries[0]).toEqual({ allowWatchBookmarks: true, timeoutSeconds: 25 });
    await vi.waitFor(() => expect(passes).toBe(2)); // the first, and the one after the watch began
    current?.onEvent("MODIFIED", { metadata: { resourceVersion: "41" } });
    await vi.waitFor(() => expect(passes).toBe(3));
    // The bookmark the server sends before its deadline, then the end: resumed from it, no pass.
    current?.onEvent("BOOKMARK", { metadata: { resourceVersion: "57" } });
    current?.end(null);
    await vi.waitFor(() => expect(queries).toHaveLength(2));
    expect(queries[1]).toEqual({ allowWatchBookmarks: true, timeoutSeconds: 25, resourceVersion: "57" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(passes).toBe(3);
    // Too old: the server's ERROR event, then the end; the next watch starts afresh and a pass follows.
    current?.onEvent("ERROR", { kind: "Status", code: 410, reason: "Expired" });
    current?.end(null);
    await vi.waitFor(() => expect(queries).toHaveLength(3));
    expect(queries[2]).toEqual({ allowWatchBookmarks: true, timeoutSeconds: 25 });
    await vi.waitFor(() => expect(passes).toBeGreaterThanOrEqual(4));
  } finally {
    await reconciler.stop();
  }
});
