import { fluxManifests, type RenderedObject } from "@nodekit/deploy-path";
import { helmCall } from "@nodekit/kube";
import { describe, expect, test } from "vitest";
import { shippedContext } from "../../../test/shipped-context.ts";
import { fluxItems, templateCall } from "./flux.ts";
import { spirePatch } from "./steps.ts";

const object = (apiVersion: string, kind: string, name: string, namespace?: string): RenderedObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
});

/** What rendering the shipped deploy path gives, in small: each item's objects as helm or the files would. */
const rendered = () => ({
  certManager: [object("apps/v1", "Deployment", "cert-manager", "cert-manager")],
  clusterApi: [object("apps/v1", "Deployment", "capi-controller-manager", "capi-system")],
  items: new Map<string, RenderedObject[]>([
    ["spire-crds", [object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "clusterspiffeids.spire.spiffe.io")]],
    ["spire", [object("apps/v1", "DaemonSet", "spire-agent"), object("v1", "ServiceAccount", "spire-server")]],
    ["nvke-controller", [object("apps/v1", "Deployment", "nvke-controller")]],
    [
      "nvke-config",
      [object("v1", "Namespace", "nke-clients"), object("v1", "ServiceAccount", "nke-client", "nke-clients")],
    ],
  ]),
});

describe("the install as Flux items", () => {
  test("the install's items in its order; each deploy path item's dependsOn is the deploy path's", async () => {
    // Given the shipped deploy path and stack config
    const context = await shippedContext();
    // When the items are made
    const items = fluxItems(context, rendered());
    // Then every item of the install is there, in the install's order, with the deploy path's dependencies
    expect(items.map((item) => [item.name, item.dependsOn, item.timeout])).toEqual([
      ["cert-manager", [], "10m"],
      ["cluster-api", ["cert-manager"], "10m"],
      ["storage-class", [], "5m"],
      ["nico-credentials", ["cluster-api"], "5m"],
      ["spire-crds", [], "5m"],
      ["spire", ["spire-crds"], "10m"],
      ["nvke-controller", ["spire"], "5m"],
      ["nvke-config", ["nvke-controller"], "5m"],
      ["client-networks", ["nvke-controller"], "5m"],
    ]);
    for (const item of context.deployPath.items) {
      expect(items.find((i) => i.name === item.name)?.dependsOn).toEqual(item.dependsOn);
      expect(items.find((i) => i.name === item.name)?.timeout).toBe(item.timeout);
    }
  });

  test("no Secret and no key in the tree: the NICo credentials item keeps the namespace and the NicoIdentity", async () => {
    const context = await shippedContext();
    const items = fluxItems(context, rendered());
    const all = items.flatMap((item) => item.objects);
    expect(all.filter((o) => o.kind === "Secret")).toEqual([]);
    for (const item of items) expect(fluxManifests(item)).not.toContain(context.nicoApiKey);
    expect(
      items.find((i) => i.name === "nico-credentials")?.objects.map((o) => `${o.kind}/${o.metadata.name}`),
    ).toEqual(["Namespace/nke-controller", "NicoIdentity/default"]);
  });

  test("Cluster API's Kustomization patches each provider's controller for SPIRE", async () => {
    const items = fluxItems(await shippedContext(), rendered());
    expect(items.find((i) => i.name === "cluster-api")?.patches).toEqual(
      [
        ["capi-system", "capi-controller-manager"],
        ["capi-kubeadm-bootstrap-system", "capi-kubeadm-bootstrap-controller-manager"],
        ["capi-kubeadm-control-plane-system", "capi-kubeadm-control-plane-controller-manager"],
        ["nico-system", "nico-controller-manager"],
      ].map(([namespace, name]) => ({
        target: { group: "apps", version: "v1", kind: "Deployment", namespace, name },
        patch: JSON.stringify({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name, namespace },
          ...JSON.parse(spirePatch("manager")),
        }),
      })),
    );
  });

  test("objects without a namespace land where helm and kubectl would put them", async () => {
    const items = fluxItems(await shippedContext(), rendered());
    const where = (name: string) =>
      items.find((i) => i.name === name)?.objects.map((o) => `${o.kind}/${o.metadata.namespace ?? "-"}`);
    expect(where("spire-crds")).toEqual(["CustomResourceDefinition/-"]);
    expect(where("spire")).toEqual(["DaemonSet/spire-system", "ServiceAccount/spire-system"]);
    expect(where("nvke-controller")).toEqual(["Deployment/nke-controller"]);
    expect(where("nvke-config")).toEqual(["Namespace/-", "ServiceAccount/nke-clients"]);
  });
});

test("a chart item's helm upgrade --install renders with helm template: same chart, namespace, values and registry", () => {
  // The release, chart, version and namespace, which both calls name the same.
  const chart = [
    "spire",
    "oci://127.0.0.1:5000/charts/spire@sha256:ab",
    "--version",
    "0.24.1",
    "--namespace",
    "spire-system",
  ];
  const call = helmCall(
    { kubeconfig: "/k" },
    [
      "upgrade",
      "--install",
      ...chart,
      "--create-namespace",
      "--values",
      "/v.yaml",
      "--wait",
      "--timeout",
      "10m",
      "--plain-http",
    ],
    { HOME: "/h" },
  );
  expect(templateCall(call).args).toEqual([
    "template",
    ...chart,
    "--values",
    "/v.yaml",
    "--plain-http",
    "--kubeconfig",
    "/k",
    "--include-crds",
    "--skip-tests",
  ]);
  expect(templateCall(call).env).toEqual(call.env);
  expect(() => templateCall({ command: "kubectl", args: ["apply"] })).toThrow(/not a helm upgrade --install call/);
});
