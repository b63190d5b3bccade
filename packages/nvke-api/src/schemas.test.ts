import { describe, expect, test } from "vitest";
import { buildOpenApiDocument } from "./openapi.ts";
import {
  ClusterSchema,
  CreateClusterRequestSchema,
  CreateMachineImageRequestSchema,
  CreateNodePoolRequestSchema,
} from "./schemas.ts";
import { cluster as returnedCluster } from "./test-support.ts";
import { parseRequest, problemsToDetails } from "./validate.ts";

const cluster = {
  name: "c1",
  provider: "capd",
  clusterReleaseName: "r1",
  controlPlaneConfig: { replicas: 3 },
  network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12" },
  infra: { machineTemplate: { apiVersion: "infrastructure.cluster.x-k8s.io/v1beta1", kind: "DockerMachineTemplate" } },
};

describe("parseRequest", () => {
  test("applies defaults to a valid request", () => {
    const { value, problems } = parseRequest(CreateClusterRequestSchema, cluster, { source: "c.yaml" });
    expect(problems).toEqual([]);
    expect(value?.network.nodeCIDRMaskSize).toBe(24);
    expect(value?.infra?.machineTemplate.spec).toEqual({});
  });

  test("reports every field problem at once, with paths and values; unknown fields included", () => {
    const { value, problems } = parseRequest(
      CreateClusterRequestSchema,
      { ...cluster, name: "Bad_Name", controlPlaneConfig: { replicas: 2 }, colour: "blue" },
      { source: "c.yaml" },
    );
    expect(value).toBeUndefined();
    expect(problems).toEqual([
      {
        severity: "error",
        source: "c.yaml",
        path: ["name"],
        value: "Bad_Name",
        message: "must consist of lower case letters, digits and '-', and start and end with a letter or digit",
      },
      {
        severity: "error",
        source: "c.yaml",
        path: ["controlPlaneConfig", "replicas"],
        value: 2,
        message: "must be odd (1, 3, 5 or 7) so that etcd keeps quorum",
      },
      {
        severity: "error",
        source: "c.yaml",
        path: ["colour"],
        message:
          "is not a known field; the fields here are name, description, provider, clusterReleaseName, clusterReleaseID, controlPlaneConfig, network, nico, infra, labels",
      },
    ]);
  });

  test("exactly one of nico and infra, and exactly one cluster release reference", () => {
    const neither = parseRequest(CreateClusterRequestSchema, { ...cluster, infra: undefined }, { source: "c" });
    expect(neither.problems.map((p) => p.message)).toEqual([
      "a nico or an infra payload is required; it chooses the node type",
    ]);
    const both = parseRequest(CreateClusterRequestSchema, { ...cluster, nico: { instanceType: "x" } }, { source: "c" });
    expect(both.problems.map((p) => p.path)).toEqual([["infra"]]);
    const twoRefs = parseRequest(
      CreateClusterRequestSchema,
      { ...cluster, clusterReleaseID: "7d8c6a3e-8f7e-4c1b-9a55-2b6f0f3d2c11" },
      { source: "c" },
    );
    expect(twoRefs.problems.map((p) => p.message)).toEqual([
      "give exactly one of clusterReleaseName and clusterReleaseID",
    ]);
  });

  test("a node mask no longer than the pod CIDR's prefix is refused", () => {
    const { problems } = parseRequest(
      CreateClusterRequestSchema,
      { ...cluster, network: { podCIDR: "10.244.0.0/24", serviceCIDR: "10.96.0.0/12", nodeCIDRMaskSize: 16 } },
      { source: "c" },
    );
    expect(problems.map((p) => [p.path?.join("."), p.message])).toEqual([
      ["network.nodeCIDRMaskSize", "must be longer than podCIDR's prefix /24, or no node gets a block"],
    ]);
  });

  test("a node pool needs name, nodeNamePrefix, desiredNodeCount and clusterID", () => {
    const { problems } = parseRequest(
      CreateNodePoolRequestSchema,
      { nico: { instanceType: "x" } },
      { source: "p.yaml" },
    );
    expect(problems.map((p) => p.path?.join("."))).toEqual(["name", "nodeNamePrefix", "desiredNodeCount", "clusterID"]);
  });

  test("the payload rule is reported together with field problems, in one pass", () => {
    const { problems } = parseRequest(
      CreateNodePoolRequestSchema,
      { name: "w", nodeNamePrefix: "w" },
      { source: "p.yaml" },
    );
    expect(problems.map((p) => p.path?.join("."))).toEqual(["desiredNodeCount", "clusterID", "nico"]);
  });

  test("a field that is not there is required, whatever the schema says of a wrong value", () => {
    const missing = parseRequest(
      CreateClusterRequestSchema,
      { ...cluster, provider: undefined, controlPlaneConfig: {}, network: { podCIDR: "10.244.0.0/16" } },
      { source: "c" },
    );
    expect(missing.problems.map((p) => [p.path?.join("."), p.message])).toEqual([
      ["provider", "is required"],
      ["controlPlaneConfig.replicas", "is required"],
      ["network.serviceCIDR", "is required"],
    ]);
    const wrong = parseRequest(
      CreateNodePoolRequestSchema,
      { name: "w", nodeNamePrefix: "w", desiredNodeCount: "three", clusterID: 7, nico: { instanceType: "x" } },
      { source: "p" },
    );
    expect(wrong.problems.map((p) => [p.path?.join("."), p.message])).toEqual([
      ["desiredNodeCount", "must be a whole number"],
      ["clusterID", "must be a UUID"],
    ]);
  });

  test("problems become the 422 details: the field path as text and the message", () => {
    const { problems } = parseRequest(
      CreateNodePoolRequestSchema,
      { name: "w", nodeNamePrefix: "w", desiredNodeCount: 1, clusterID: "x", infra: {}, taints: [{ key: "" }] },
      { source: "p" },
    );
    expect(problemsToDetails(problems)).toEqual([
      { field: "clusterID", message: "must be a UUID" },
      { field: "infra.machineTemplate", message: "is required" },
      { field: "taints[0].key", message: "is not a valid key: it has an empty name" },
      { field: "taints[0].effect", message: "is required" },
    ]);
    expect(problemsToDetails(parseRequest(CreateNodePoolRequestSchema, [], { source: "p" }).problems)).toEqual([
      { field: "(body)", message: "must be a mapping, not a list" },
    ]);
  });

  test("images are pinned by digest", () => {
    const { problems } = parseRequest(
      CreateMachineImageRequestSchema,
      {
        name: "img",
        version: "1.0.0",
        kubernetesVersion: "v1.31.4",
        os: { distribution: "ubuntu", version: "24.04" },
        architecture: "amd64",
        image: "registry.example/img:latest",
      },
      { source: "m.yaml" },
    );
    expect(problems.map((p) => p.message)).toEqual([
      "must be an image reference pinned by digest: <repository>@sha256:<64 hex>",
    ]);
  });

  test("objects keep working when a newer controller adds fields", () => {
    const parsed = ClusterSchema.parse({
      ...returnedCluster("c1"),
      status: { phase: "Ready", controlPlaneReady: true, somethingNew: 1 },
      newField: true,
    });
    expect(parsed.name).toBe("c1");
  });
});

describe("OpenAPI document", () => {
  test("is OpenAPI 3.1 with every route and schema, built from the zod schemas", () => {
    const doc = buildOpenApiDocument() as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { additionalProperties?: boolean; required?: string[] }> };
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/api/docs",
      "/api/v1/clusterreleases",
      "/api/v1/clusterreleases/{id}",
      "/api/v1/clusters",
      "/api/v1/clusters/{id}",
      "/api/v1/machineimages",
      "/api/v1/machineimages/{id}",
      "/api/v1/nodepoolreleases",
      "/api/v1/nodepoolreleases/{id}",
      "/api/v1/nodepools",
      "/api/v1/nodepools/{id}",
      "/healthz",
    ]);
    expect(Object.keys(doc.paths["/api/v1/clusters/{id}"] ?? {}).sort()).toEqual([
      "delete",
      "get",
      "parameters",
      "patch",
    ]);
    const request = doc.components.schemas.CreateClusterRequest;
    expect(request?.additionalProperties).toBe(false);
    expect(request?.required).toEqual(["name", "provider", "controlPlaneConfig", "network"]);
    expect(doc.components.schemas.CreateNodePoolRequest?.required).toEqual([
      "name",
      "nodeNamePrefix",
      "desiredNodeCount",
      "clusterID",
    ]);
  });
});
