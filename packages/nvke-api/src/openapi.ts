import * as z from "zod";
import {
  ApiErrorBodySchema,
  ClusterListSchema,
  ClusterPatchSchema,
  ClusterReleaseListSchema,
  ClusterReleaseSchema,
  ClusterSchema,
  CreateClusterReleaseRequestSchema,
  CreateClusterRequestSchema,
  CreateMachineImageRequestSchema,
  CreateNodePoolReleaseRequestSchema,
  CreateNodePoolRequestSchema,
  HealthSchema,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  MachineImageListSchema,
  MachineImageSchema,
  MERGE_PATCH_CONTENT_TYPE,
  NodePoolListSchema,
  NodePoolPatchSchema,
  NodePoolReleaseListSchema,
  NodePoolReleaseSchema,
  NodePoolSchema,
} from "./schemas.ts";

/** The API version this package describes; served in the OpenAPI document's `info.version`. */
export const API_VERSION = "v1";

const components: Record<string, { schema: z.ZodType; io: "input" | "output"; description: string }> = {
  CreateClusterRequest: {
    schema: CreateClusterRequestSchema,
    io: "input",
    description: "What POST /api/v1/clusters takes: a tenant cluster to provision. Provisioning is asynchronous.",
  },
  ClusterPatch: {
    schema: ClusterPatchSchema,
    io: "input",
    description: "A JSON merge patch (RFC 7396) for a cluster: only the fields named change; null clears one.",
  },
  Cluster: {
    schema: ClusterSchema,
    io: "output",
    description: "A tenant Kubernetes cluster: its spec as created (and patched since) and the controller's status.",
  },
  ClusterList: { schema: ClusterListSchema, io: "output", description: "A page of clusters." },
  CreateNodePoolRequest: {
    schema: CreateNodePoolRequestSchema,
    io: "input",
    description:
      "What POST /api/v1/nodepools takes: a pool of worker nodes for a cluster. Provisioning is asynchronous.",
  },
  NodePoolPatch: {
    schema: NodePoolPatchSchema,
    io: "input",
    description: 'A JSON merge patch for a node pool; scaling is {"desiredNodeCount": N}.',
  },
  NodePool: {
    schema: NodePoolSchema,
    io: "output",
    description: "A pool of nodes of one tenant cluster, all of one node type, with each node's state.",
  },
  NodePoolList: { schema: NodePoolListSchema, io: "output", description: "A page of node pools." },
  CreateMachineImageRequest: {
    schema: CreateMachineImageRequestSchema,
    io: "input",
    description: "What POST /api/v1/machineimages takes: a node image to publish.",
  },
  MachineImage: {
    schema: MachineImageSchema,
    io: "output",
    description: "A node image, pinned by digest, for one Kubernetes version and architecture.",
  },
  MachineImageList: { schema: MachineImageListSchema, io: "output", description: "A page of machine images." },
  CreateClusterReleaseRequest: {
    schema: CreateClusterReleaseRequestSchema,
    io: "input",
    description: "What POST /api/v1/clusterreleases takes: a control-plane release to publish.",
  },
  ClusterRelease: {
    schema: ClusterReleaseSchema,
    io: "output",
    description:
      "What a cluster's control plane is built from: a Kubernetes version, a machine image, components and charts.",
  },
  ClusterReleaseList: { schema: ClusterReleaseListSchema, io: "output", description: "A page of cluster releases." },
  CreateNodePoolReleaseRequest: {
    schema: CreateNodePoolReleaseRequestSchema,
    io: "input",
    description: "What POST /api/v1/nodepoolreleases takes: a worker release to publish.",
  },
  NodePoolRelease: {
    schema: NodePoolReleaseSchema,
    io: "output",
    description: "What a node pool's workers are built from: a Kubernetes version, a machine image and components.",
  },
  NodePoolReleaseList: {
    schema: NodePoolReleaseListSchema,
    io: "output",
    description: "A page of node pool releases.",
  },
  Health: { schema: HealthSchema, io: "output", description: "The answer of GET /healthz." },
  Error: {
    schema: ApiErrorBodySchema,
    io: "output",
    description: "The error body of every answer with status 400 or more.",
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ "application/json": { schema: ref(name) } });

function errors(...codes: number[]): Record<string, unknown> {
  const descriptions: Record<number, string> = {
    400: "Bad request (a malformed body or query parameter)",
    401: "No valid bearer token for the controller's audience (auth on)",
    404: "Not found",
    409: "Conflicts with current state",
    415: "Unsupported content type",
    422: "Invalid: validation failed; details name each field",
  };
  return Object.fromEntries(
    codes.map((code) => [String(code), { description: descriptions[code], content: json("Error") }]),
  );
}

const pagingParameters = [
  {
    name: "limit",
    in: "query",
    description: `Items per page (default ${LIST_LIMIT_DEFAULT}, at most ${LIST_LIMIT_MAX}).`,
    schema: { type: "integer", minimum: 1, maximum: LIST_LIMIT_MAX },
  },
  {
    name: "continue",
    in: "query",
    description: "The opaque `continue` value of the previous page.",
    schema: { type: "string" },
  },
  { name: "name", in: "query", description: "Only the item with this exact name.", schema: { type: "string" } },
];

const idParameter = { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } };

function collection(
  tag: string,
  create: string,
  object: string,
  list: string,
  async: boolean,
  extraQuery: object[] = [],
) {
  return {
    post: {
      tags: [tag],
      operationId: `create${object}`,
      requestBody: { required: true, content: json(create) },
      responses: {
        [async ? "202" : "201"]: {
          description: async ? `Accepted; the ${object} is provisioned asynchronously` : "Created",
          content: json(object),
        },
        ...errors(400, 401, 404, 409, 415, 422),
      },
    },
    get: {
      tags: [tag],
      operationId: `list${object}s`,
      parameters: [...pagingParameters, ...extraQuery],
      responses: { "200": { description: "One page", content: json(list) }, ...errors(400, 401) },
    },
  };
}

function item(tag: string, object: string, patch?: string) {
  return {
    parameters: [idParameter],
    get: {
      tags: [tag],
      operationId: `get${object}`,
      responses: { "200": { description: object, content: json(object) }, ...errors(401, 404) },
    },
    ...(patch === undefined
      ? {}
      : {
          patch: {
            tags: [tag],
            operationId: `patch${object}`,
            description:
              "JSON merge patch (RFC 7396): only the fields in the patch change; null clears a field. Immutable fields are rejected with 422.",
            requestBody: { required: true, content: { [MERGE_PATCH_CONTENT_TYPE]: { schema: ref(patch) } } },
            responses: {
              "200": { description: "The change is recorded", content: json(object) },
              ...errors(400, 401, 404, 409, 415, 422),
            },
          },
          delete: {
            tags: [tag],
            operationId: `delete${object}`,
            description: "Asynchronous: the object goes Deleting and disappears when the controller is done.",
            responses: { "202": { description: "Deletion started", content: json(object) }, ...errors(401, 404, 409) },
          },
        }),
  };
}

/** The OpenAPI 3.1 document the controller serves at `GET /api/docs`, built from the zod schemas. */
export function buildOpenApiDocument(options: { serverUrl?: string } = {}): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const [name, { schema, io, description }] of Object.entries(components)) {
    const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    schemas[name] = { description, ...jsonSchema };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "NVKE controller API",
      version: API_VERSION,
      description:
        "Tenant clusters, node pools and the release objects they are built from. Every error answers with the Error body. With authentication on, every request needs `Authorization: Bearer <token>` for the audience in the auth ConfigMap.",
    },
    ...(options.serverUrl === undefined ? {} : { servers: [{ url: options.serverUrl }] }),
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "A ServiceAccount token for the audience in the auth ConfigMap",
        },
      },
    },
    security: [{ bearer: [] }, {}],
    paths: {
      "/healthz": {
        get: {
          operationId: "healthz",
          security: [],
          responses: { "200": { description: "Serving", content: json("Health") } },
        },
      },
      "/api/docs": {
        get: { operationId: "openapi", security: [], responses: { "200": { description: "This document" } } },
      },
      "/api/v1/clusters": collection("clusters", "CreateClusterRequest", "Cluster", "ClusterList", true),
      "/api/v1/clusters/{id}": item("clusters", "Cluster", "ClusterPatch"),
      "/api/v1/nodepools": collection("nodepools", "CreateNodePoolRequest", "NodePool", "NodePoolList", true, [
        {
          name: "clusterID",
          in: "query",
          description: "Only the node pools of this cluster.",
          schema: { type: "string", format: "uuid" },
        },
      ]),
      "/api/v1/nodepools/{id}": item("nodepools", "NodePool", "NodePoolPatch"),
      "/api/v1/machineimages": collection(
        "releases",
        "CreateMachineImageRequest",
        "MachineImage",
        "MachineImageList",
        false,
      ),
      "/api/v1/machineimages/{id}": item("releases", "MachineImage"),
      "/api/v1/clusterreleases": collection(
        "releases",
        "CreateClusterReleaseRequest",
        "ClusterRelease",
        "ClusterReleaseList",
        false,
      ),
      "/api/v1/clusterreleases/{id}": item("releases", "ClusterRelease"),
      "/api/v1/nodepoolreleases": collection(
        "releases",
        "CreateNodePoolReleaseRequest",
        "NodePoolRelease",
        "NodePoolReleaseList",
        false,
      ),
      "/api/v1/nodepoolreleases/{id}": item("releases", "NodePoolRelease"),
    },
  };
}
