import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { eventually } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { clientsFor } from "./kube.ts";
import { useControlPlane } from "./vitest.ts";

const group = "testenv.nodekit.dev";
const version = "v1alpha1";
const plural = "widgets";

describe("CustomResourceDefinitions", () => {
  test("a CRD becomes Established and its resources take a status patch through the status subresource", async () => {
    // Given a CRD with a status subresource (on a plane of this file's own: the CRD outlives the test)
    const plane = await useControlPlane({ dedicated: true });
    const namespace = await plane.createNamespace("crd");
    const { apiextensions, custom } = clientsFor(plane.adminKubeconfigPath);
    await apiextensions.createCustomResourceDefinition({
      body: {
        metadata: { name: `${plural}.${group}` },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural, singular: "widget", kind: "Widget", listKind: "WidgetList" },
          versions: [
            {
              name: version,
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: {
                openAPIV3Schema: {
                  type: "object",
                  properties: {
                    spec: { type: "object", properties: { size: { type: "integer", minimum: 1 } } },
                    status: { type: "object", properties: { phase: { type: "string" } } },
                  },
                },
              },
            },
          ],
        },
      },
    });

    // When it is Established
    await eventually(async () => {
      const crd = await apiextensions.readCustomResourceDefinition({ name: `${plural}.${group}` });
      const established = crd.status?.conditions?.find((condition) => condition.type === "Established");
      if (established?.status !== "True") throw new Error("CRD not Established yet");
    });

    // Then a custom resource can be created (the handler may lag Established by a moment)
    const created = await eventually(() =>
      custom.createNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        body: { apiVersion: `${group}/${version}`, kind: "Widget", metadata: { name: "w1" }, spec: { size: 3 } },
      }),
    );
    expect(created.metadata.generation).toBe(1);

    // And its status can be patched through /status
    const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
    await custom.patchNamespacedCustomObjectStatus(
      { group, version, namespace, plural, name: "w1", body: { status: { phase: "Ready" } } },
      merge,
    );
    // While a status change sent to the main resource is ignored, and a spec change there is not
    await custom.patchNamespacedCustomObject(
      { group, version, namespace, plural, name: "w1", body: { spec: { size: 5 }, status: { phase: "Ignored" } } },
      merge,
    );
    const widget = await custom.getNamespacedCustomObject({ group, version, namespace, plural, name: "w1" });
    expect(widget.status).toEqual({ phase: "Ready" });
    expect(widget.spec).toEqual({ size: 5 });
    expect(widget.metadata.generation).toBe(2);

    // And the schema is enforced
    await expect(
      custom.createNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        body: { apiVersion: `${group}/${version}`, kind: "Widget", metadata: { name: "w2" }, spec: { size: 0 } },
      }),
    ).rejects.toMatchObject({ code: 422 });
  });
});
