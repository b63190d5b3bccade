import { KubeConfig, Watch } from "@kubernetes/client-node";
import { eventually } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { clientsFor } from "./kube.ts";
import { reconcileOnChange } from "./reconcile-on-change.ts";
import { useControlPlane } from "./vitest.ts";

// What the unit test cannot show: that a real kube-apiserver ends a watch at its
// timeoutSeconds after a bookmark, and that the watch resumed from that bookmark is sent the
// changes made while none was open, so a stand-in on an idle cluster lists nothing.

test("on an idle collection, watches end and resume from bookmarks with no pass; a change is still seen", async () => {
  const plane = await useControlPlane();
  const namespace = await plane.createNamespace("watch-resume");
  const { core } = clientsFor(plane.adminKubeconfigPath);
  const kc = new KubeConfig();
  kc.loadFromFile(plane.adminKubeconfigPath);
  const real = new Watch(kc);
  const queries: Array<Record<string, string | number | boolean | undefined>> = [];
  const watch = {
    watch: (path: string, query: Record<string, string | number | boolean | undefined>, ...rest: [never, never]) => {
      queries.push(query);
      return real.watch(path, query, ...rest);
    },
  } as unknown as Watch;
  let passes = 0;
  let seen = "";
  const reconciler = reconcileOnChange({
    watch,
    paths: [`/api/v1/namespaces/${namespace}/configmaps`],
    reconcile: async () => {
      passes += 1;
      const list = await core.listNamespacedConfigMap({ namespace });
      seen = list.items.map((item) => item.data?.value ?? "").join(",");
      return true;
    },
    // The bookmark comes 2 s before the deadline: 3 s of slack for a loaded machine.
    watchSeconds: 5,
  });
  try {
    // Three watches: the first, and two resumed from a bookmark's version, with no pass between.
    await eventually(async () => expect(queries.length).toBeGreaterThanOrEqual(3), 45_000);
    const settled = passes;
    expect(queries[0]?.resourceVersion).toBeUndefined();
    expect(queries[1]?.resourceVersion).toMatch(/^\d+$/);
    expect(queries[2]?.resourceVersion).toMatch(/^\d+$/);
    await eventually(async () => expect(queries.length).toBeGreaterThanOrEqual(4), 45_000);
    expect(passes).toBe(settled);
    // A change reaches the resumed watch.
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: "one" }, data: { value: "1" } } });
    await eventually(async () => expect(seen).toBe("1"));
  } finally {
    await reconciler.stop();
  }
});
