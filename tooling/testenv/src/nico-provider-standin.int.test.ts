import { eventually } from "@nodekit/test-utils";
import { beforeAll, describe, expect, test } from "vitest";
import { clientsFor } from "./kube.ts";
import { startNicoProviderStandIn } from "./nico-provider-standin.ts";
import { useControlPlane } from "./vitest.ts";

// The NICo provider stand-in is as strict as the check it stands in for: only a Secret that
// exists, holds an apiKey, and whose key NICo accepts reads HEALTHY; and it writes only through
// the status subresource, and only when something changed. A plane of the file's own: the CRD
// outlives the test.

const group = "infrastructure.cluster.x-k8s.io";
const version = "v1beta1";
const plural = "nicoidentities";
let clients: ReturnType<typeof clientsFor>;
let admin: string;
let namespace: string;

beforeAll(async () => {
  const plane = await useControlPlane({ dedicated: true });
  admin = plane.adminKubeconfigPath;
  clients = clientsFor(admin);
  namespace = await plane.createNamespace("nico");
  await clients.apiextensions.createCustomResourceDefinition({
    body: {
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural, singular: "nicoidentity", kind: "NicoIdentity", listKind: "NicoIdentityList" },
        versions: [
          {
            name: version,
            served: true,
            storage: true,
            subresources: { status: {} },
            // The typed client's name for x-kubernetes-preserve-unknown-fields (the raw key is dropped).
            schema: { openAPIV3Schema: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
          },
        ],
      },
    },
  });
  await eventually(async () => {
    const crd = await clients.apiextensions.readCustomResourceDefinition({ name: `${plural}.${group}` });
    if (crd.status?.conditions?.find((c) => c.type === "Established")?.status !== "True") throw new Error("not yet");
  });
});

const identity = async (name: string) =>
  (await clients.custom.getNamespacedCustomObject({ group, version, namespace, plural, name })) as {
    metadata: { resourceVersion: string };
    spec?: unknown;
    status?: { credentials?: { state: string; message: string; lastCheckTime: string } };
  };

describe("the NICo provider stand-in's credential check", () => {
  test("a missing Secret, a Secret without apiKey and a refused key are INVALID; the accepted key is HEALTHY", async () => {
    let clock = new Date("2026-03-02T10:15:00.250Z");
    const standIn = startNicoProviderStandIn(admin, {
      now: () => clock,
      check: (key) =>
        key === "good-key"
          ? { state: "HEALTHY", message: "authenticated" }
          : { state: "INVALID", message: "NICo refused the API key" },
    });
    try {
      await clients.custom.createNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        body: {
          apiVersion: `${group}/${version}`,
          kind: "NicoIdentity",
          metadata: { name: "default" },
          spec: { secretRef: { name: "nico-credentials" } },
        },
      });
      // Each change is reconciled as it is watched, as the provider's informers do: no pass is asked for.
      await eventually(async () =>
        expect((await identity("default")).status?.credentials).toEqual({
          state: "INVALID",
          message: `Secret ${namespace}/nico-credentials not found`,
          lastCheckTime: "2026-03-02T10:15:00Z",
        }),
      );

      await clients.core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: "nico-credentials" }, stringData: { token: "x" } },
      });
      await eventually(async () =>
        expect((await identity("default")).status?.credentials?.message).toBe(
          `Secret ${namespace}/nico-credentials has no apiKey`,
        ),
      );

      await clients.core.replaceNamespacedSecret({
        name: "nico-credentials",
        namespace,
        body: { metadata: { name: "nico-credentials" }, stringData: { apiKey: "wrong-key" } },
      });
      await eventually(async () =>
        expect((await identity("default")).status?.credentials).toMatchObject({
          state: "INVALID",
          message: "NICo refused the API key",
        }),
      );

      clock = new Date("2026-03-02T10:16:00Z");
      await clients.core.replaceNamespacedSecret({
        name: "nico-credentials",
        namespace,
        body: { metadata: { name: "nico-credentials" }, stringData: { apiKey: "good-key" } },
      });
      const healthy = await eventually(async () => {
        const found = await identity("default");
        expect(found.status?.credentials).toEqual({
          state: "HEALTHY",
          message: "authenticated",
          lastCheckTime: "2026-03-02T10:16:00Z",
        });
        return found;
      });
      // The spec is the user's: the check writes the status only.
      expect(healthy.spec).toEqual({ secretRef: { name: "nico-credentials" } });

      // Nothing changed: not written again until the recheck is due (a pass asked for here
      // stands for the resync, every recheckMs, whose clock the test holds).
      clock = new Date("2026-03-02T10:17:00Z");
      await standIn.reconcile();
      expect((await identity("default")).metadata.resourceVersion).toBe(healthy.metadata.resourceVersion);
      clock = new Date("2026-03-02T10:22:00Z");
      await standIn.reconcile();
      expect((await identity("default")).status?.credentials?.lastCheckTime).toBe("2026-03-02T10:22:00Z");
    } finally {
      await standIn.stop();
    }
  });
});
