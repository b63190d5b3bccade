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
