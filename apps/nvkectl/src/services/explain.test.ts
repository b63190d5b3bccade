import { buildOpenApiDocument } from "@nodekit/nvke-api";
import { userErrorOf } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { explainSchema } from "./explain.ts";

const document = buildOpenApiDocument() as Parameters<typeof explainSchema>[0];

describe("explain, from the controller's OpenAPI document", () => {
  test("a kind: its description and its fields with types, required marks and descriptions", () => {
    const text = explainSchema(document, "nodepools");
    expect(text).toMatch(
      /^KIND: {5}NodePool\nVERSION: {2}v1\n\nDESCRIPTION:\n {4}A pool of nodes of one tenant cluster/,
    );
    expect(text).toContain("NOTE: create nodepool -f takes a CreateNodePoolRequest");
    expect(text).toContain(
      "  desiredNodeCount\t<integer> -required-\n    How many nodes the pool should have (0 to 5000)",
    );
    expect(text).toContain("  labels\t<map[string]string> -required-\n");
    expect(text).toContain("  taints\t<[]Object> -required-\n");
  });

  test("a field, through lists and unions: its type, description and allowed values", () => {
    expect(explainSchema(document, "cluster.status.conditions.status")).toBe(
      'KIND:     Cluster\nVERSION:  v1\n\nFIELD: status <string>\n\nDESCRIPTION:\n    Possible values: "True", "False", "Unknown".\n',
    );
    const cidr = explainSchema(document, "createclusterrequest.network.podCIDR");
    expect(cidr).toContain("FIELD: podCIDR <string>\n");
    expect(cidr).toContain("The pod network (IPv4 or IPv6 CIDR)");
    expect(explainSchema(document, "ClusterPatch.labels")).toContain("FIELD: labels <map[string]string>");
  });

  test("--recursive prints the tree of fields", () => {
    const text = explainSchema(document, "createclusterrequest", { recursive: true });
    expect(text).toContain("  network\t<Object> -required-\n    podCIDR\t<string> -required-\n");
    expect(text).toContain("      kind\t<string> -required-\n");
  });

  test("an unknown kind or field exits 4 and lists what there is", async () => {
    const kind = await userErrorOf(Promise.resolve().then(() => explainSchema(document, "frob")));
    expect([kind.code, kind.exitCode]).toEqual(["EXPLAIN_KIND_UNKNOWN", 4]);
    expect(kind.why).toMatch(
      /^it describes cluster, nodepool, machineimage, clusterrelease, nodepoolrelease, and the documents createclusterrequest, clusterpatch/,
    );
    const field = await userErrorOf(Promise.resolve().then(() => explainSchema(document, "cluster.network.pods")));
    expect([field.code, field.message]).toEqual(["EXPLAIN_FIELD_NOT_FOUND", 'Cluster.network has no field "pods"']);
    expect(field.why).toBe("the fields of Cluster.network are podCIDR, serviceCIDR, nodeCIDRMaskSize");
  });
});
