import { ApiException } from "@kubernetes/client-node";
import { eventually } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { clientsFor, grantRole } from "./kube.ts";
import { useControlPlane } from "./vitest.ts";

/** What a failed call through @kubernetes/client-node looks like to our code. */
async function failure(call: Promise<unknown>): Promise<{ code: number; reason: string; kind: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiException)) throw new Error(`expected an ApiException, got ${String(error)}`);
  // The body is the raw Status JSON as a string.
  const status = JSON.parse(String(error.body)) as { kind: string; reason: string };
  return { code: error.code, reason: status.reason, kind: status.kind };
}

describe("RBAC with resourceNames", () => {
  test("a user granted get on one ConfigMap reads it, is Forbidden on another, and NotFound stays distinct", async () => {
    // Given two ConfigMaps and a Role that lets "carol" get only "allowed" (and "ghost", which does not exist)
    const plane = await useControlPlane();
    const namespace = await plane.createNamespace("rbac");
    const admin = clientsFor(plane.adminKubeconfigPath);
    for (const name of ["allowed", "other"]) {
      await admin.core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { who: name } } });
    }
    await grantRole(admin.rbac, {
      namespace,
      name: "carol-reads-one",
      user: "carol",
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: ["allowed", "ghost"] }],
    });
    const carol = clientsFor(await plane.kubeconfigFor({ user: "carol", groups: ["nvke-users"] }));

    // When carol reads "allowed" (RBAC's caches catch up within moments)
    const allowed = await eventually(() => carol.core.readNamespacedConfigMap({ name: "allowed", namespace }));

    // Then she gets it
    expect(allowed.data).toEqual({ who: "allowed" });

    // And "other" is Forbidden: HTTP 403 with a Status body
    expect(await failure(carol.core.readNamespacedConfigMap({ name: "other", namespace }))).toEqual({
      code: 403,
      reason: "Forbidden",
      kind: "Status",
    });

    // And a name she may read but that does not exist is NotFound (404), which code can tell apart
    expect(await failure(carol.core.readNamespacedConfigMap({ name: "ghost", namespace }))).toEqual({
      code: 404,
      reason: "NotFound",
      kind: "Status",
    });

    // And list (not granted, resourceNames cannot grant it) is Forbidden too
    expect((await failure(carol.core.listNamespacedConfigMap({ namespace }))).code).toBe(403);
  });

  test("a user with no grant at all is Forbidden, not Unauthorized", async () => {
    const plane = await useControlPlane();
    const namespace = await plane.createNamespace("rbac-none");
    const nobody = clientsFor(await plane.kubeconfigFor({ user: "nobody" }));
    expect(await failure(nobody.core.readNamespacedConfigMap({ name: "anything", namespace }))).toEqual({
      code: 403,
      reason: "Forbidden",
      kind: "Status",
    });
  });
});
