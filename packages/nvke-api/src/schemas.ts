import { DNS_LABEL_MAX_LENGTH, DNS_LABEL_PATTERN } from "@nodekit/documents/names";
import * as z from "zod";

// The NVKE controller API contract. Request schemas are strict (an unknown field is an
// error, as the controller answers it with 422); object schemas strip fields they do not
// know, so a client keeps working against a newer controller that returns more.

// ---------------------------------------------------------------------------------------
// Shared pieces

/**
 * A schema's own message for a wrong value that leaves a missing field to the error map
 * the request is validated with (`is required`): zod puts a schema's message ahead of
 * every other, so a plain `z.int("must be a whole number")` says that of a field that is
 * not there at all.
 */
function unlessMissing(message: string) {
  return { error: (issue: z.core.$ZodRawIssue) => (issue.input === undefined ? undefined : message) };
}

/** An RFC 1123 label: what Kubernetes accepts as a name, and what becomes part of Secret names. */
export const NameSchema = z
  .string()
  .min(1, "must not be empty")
  .max(DNS_LABEL_MAX_LENGTH, "must be at most 63 characters")
  .regex(
    DNS_LABEL_PATTERN,
    "must consist of lower case letters, digits and '-', and start and end with a letter or digit",
  );

export const IdSchema = z.uuid(unlessMissing("must be a UUID"));

export const DigestSchema = z.string().regex(/^sha256:[a-f0-9]{64}$/, "must be a digest sha256:<64 hex digits>");

/** An OCI reference pinned by digest: `registry/repository@sha256:…` (a tag may precede the digest). */
export const ImageReferenceSchema = z
  .string()
  .regex(/^[^\s@]+@sha256:[a-f0-9]{64}$/, "must be an image reference pinned by digest: <repository>@sha256:<64 hex>");

export const KubernetesVersionSchema = z
  .string()
  .regex(/^v\d+\.\d+\.\d+$/, "must be a Kubernetes version such as v1.31.4");

export const VersionSchema = z
  .string()
  .regex(/^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/, "must be a semantic version such as 1.2.0");

export const CidrSchema = z.union([z.cidrv4(), z.cidrv6()], unlessMissing("must be a CIDR such as 10.244.0.0/16"));

export const LabelsSchema = z.record(
  z.string().min(1).max(317, "label keys are at most 317 characters"),
  z.string().max(63, "label values are at most 63 characters"),
);

export const ProviderSchema = z.enum(["capd", "nico"], unlessMissing('must be "capd" or "nico"'));
export type Provider = z.infer<typeof ProviderSchema>;

/** Machines from NICo (NVIDIA Infrastructure Controller): the instance type is the node type. */
export const NicoPayloadSchema = z.strictObject({
  /** NICo instance type; chooses the node hardware. */
  instanceType: z.string().min(1, "must not be empty"),
  /** NICo VPC the machines join; the site default when omitted. */
  vpcID: z.string().min(1).optional(),
  /** NICo subnet (or VPC prefix) for the machines' primary interface. */
  subnetID: z.string().min(1).optional(),
  /** NICo SSH key groups installed on the machines. */
  sshKeyGroupIDs: z.array(z.string().min(1)).optional(),
  /** A MachineImage by name; the release's image when omitted. */
  machineImageName: NameSchema.optional(),
});
export type NicoPayload = z.infer<typeof NicoPayloadSchema>;

/** Machines from another Cluster API infrastructure provider (e.g. CAPD): its machine template. */
export const InfraPayloadSchema = z.strictObject({
  machineTemplate: z.strictObject({
    apiVersion: z.string().min(1, "must not be empty"),
    kind: z.string().min(1, "must not be empty"),
    /** The provider's machine template spec, passed through as given. */
    spec: z.record(z.string(), z.unknown()).default({}),
  }),
});
export type InfraPayload = z.infer<typeof InfraPayloadSchema>;

/**
 * Object-level rules that only look at which keys are present run even when a field is
 * invalid, so that one pass reports every problem.
 */
const alwaysOnObjects = {
  when: (payload: { value: unknown }) =>
    typeof payload.value === "object" && payload.value !== null && !Array.isArray(payload.value),
};

function exactlyOnePayload(value: { nico?: unknown; infra?: unknown }, ctx: z.core.$RefinementCtx<unknown>): void {
  if (value.nico !== undefined && value.infra !== undefined) {
    ctx.addIssue({ code: "custom", path: ["infra"], message: "give either a nico or an infra payload, not both" });
  } else if (value.nico === undefined && value.infra === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["nico"],
      message: "a nico or an infra payload is required; it chooses the node type",
    });
  }
}

// ---------------------------------------------------------------------------------------
// Clusters

export const ControlPlaneConfigSchema = z.strictObject({
  /** Control-plane machines; odd so that etcd keeps quorum. */
  replicas: z
    .int(unlessMissing("must be a whole number"))
    .min(1, "must be at least 1")
    .max(7, "must be at most 7")
    .refine((n) => n % 2 === 1, "must be odd (1, 3, 5 or 7) so that etcd keeps quorum"),
  /** Prefix of control-plane node names; `<cluster>-cp` when omitted. */
  nodeNamePrefix: NameSchema.optional(),
});
export type ControlPlaneConfig = z.infer<typeof ControlPlaneConfigSchema>;

export const ClusterNetworkSchema = z
  .strictObject({
    podCIDR: CidrSchema,
    serviceCIDR: CidrSchema,
    /** Each node takes one block of this size from podCIDR; this bounds the cluster's node count. */
    nodeCIDRMaskSize: z.int(unlessMissing("must be a whole number")).min(8).max(126).default(24),
  })
  .superRefine((network, ctx) => {
    const prefix = Number(network.podCIDR.split("/")[1]);
    const max = network.podCIDR.includes(":") ? 128 : 32;
    if (network.nodeCIDRMaskSize > max) {
      ctx.addIssue({
        code: "custom",
        path: ["nodeCIDRMaskSize"],
        message: `must be at most ${max} for podCIDR ${network.podCIDR}`,
      });
    } else if (Number.isFinite(prefix) && network.nodeCIDRMaskSize <= prefix) {
      ctx.addIssue({
        code: "custom",
        path: ["nodeCIDRMaskSize"],
        message: `must be longer than podCIDR's prefix /${prefix}, or no node gets a block`,
      });
    }
  });
export type ClusterNetwork = z.infer<typeof ClusterNetworkSchema>;

const clusterReleaseRef = {
  /** The ClusterRelease by name (give this or clusterReleaseID). */
  clusterReleaseName: NameSchema.optional(),
  /** The ClusterRelease by ID (give this or clusterReleaseName). */
  clusterReleaseID: IdSchema.optional(),
};

export const CreateClusterRequestSchema = z
  .strictObject({
    name: NameSchema,
    description: z.string().max(1024).optional(),
    provider: ProviderSchema,
    ...clusterReleaseRef,
    controlPlaneConfig: ControlPlaneConfigSchema,
    network: ClusterNetworkSchema,
    nico: NicoPayloadSchema.optional(),
    infra: InfraPayloadSchema.optional(),
    labels: LabelsSchema.optional(),
  })
  .superRefine((request, ctx) => {
    if ((request.clusterReleaseName === undefined) === (request.clusterReleaseID === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: ["clusterReleaseName"],
        message: "give exactly one of clusterReleaseName and clusterReleaseID",
      });
    }
    exactlyOnePayload(request, ctx);
  }, alwaysOnObjects);
export type CreateClusterRequest = z.input<typeof CreateClusterRequestSchema>;

export const ClusterPhaseSchema = z.enum(["Provisioning", "Ready", "Deleting", "Failed"]);
export type ClusterPhase = z.infer<typeof ClusterPhaseSchema>;

export const ClusterStatusSchema = z.object({
  phase: ClusterPhaseSchema,
  /** What the controller is doing or why it failed, in its own words. */
  message: z.string().optional(),
  controlPlaneReady: z.boolean(),
  /** `https://<host>:6443` once the control plane has one. */
  controlPlaneEndpoint: z.string().optional(),
  /** The Cluster API Secret holding the tenant kubeconfig (data key `value`), once Ready. */
  kubeconfigSecret: z.object({ namespace: z.string(), name: z.string() }).optional(),
});
export type ClusterStatus = z.infer<typeof ClusterStatusSchema>;

export const ClusterSchema = z.object({
  id: IdSchema,
  name: NameSchema,
  description: z.string().optional(),
  provider: ProviderSchema,
  clusterReleaseID: IdSchema,
  clusterReleaseName: NameSchema,
  kubernetesVersion: z.string(),
  controlPlaneConfig: z.object({ replicas: z.int(), nodeNamePrefix: z.string() }),
  network: z.object({ podCIDR: z.string(), serviceCIDR: z.string(), nodeCIDRMaskSize: z.int() }),
  nico: z.object({ ...NicoPayloadSchema.shape }).optional(),
  infra: z.object({ ...InfraPayloadSchema.shape }).optional(),
  labels: z.record(z.string(), z.string()),
  status: ClusterStatusSchema,
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type Cluster = z.infer<typeof ClusterSchema>;

/**
 * A JSON merge patch (RFC 7396) for a cluster: only the fields given change, `null`
 * clears an optional field (or a label). name, provider, network and the nico/infra
 * payload are immutable (422); id, status and timestamps belong to the controller.
 */
export const ClusterPatchSchema = z.strictObject({
  description: z.string().max(1024).nullable().optional(),
  clusterReleaseName: NameSchema.optional(),
  clusterReleaseID: IdSchema.optional(),
  controlPlaneConfig: z
    .strictObject({
      replicas: ControlPlaneConfigSchema.shape.replicas.optional(),
      nodeNamePrefix: NameSchema.optional(),
    })
    .optional(),
  labels: z.record(z.string().min(1), z.string().max(63).nullable()).nullable().optional(),
});
export type ClusterPatch = z.input<typeof ClusterPatchSchema>;

/** Fields of a cluster that a patch may not change. */
export const CLUSTER_IMMUTABLE_FIELDS = ["name", "provider", "network", "nico", "infra"] as const;
/** Fields of a cluster that only the controller sets. */
export const CLUSTER_READ_ONLY_FIELDS = ["id", "kubernetesVersion", "status", "createdAt", "updatedAt"] as const;

// ---------------------------------------------------------------------------------------
// Node pools

export const NodePoolRoleSchema = z.enum(["worker", "control-plane"]);
export type NodePoolRole = z.infer<typeof NodePoolRoleSchema>;

export const TaintSchema = z.strictObject({
  key: z.string().min(1),
  value: z.string().optional(),
  effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]),
});
export type Taint = z.infer<typeof TaintSchema>;

export const DesiredNodeCountSchema = z
  .int(unlessMissing("must be a whole number"))
  .min(0, "must be 0 or more")
  .max(5000, "must be at most 5000");

export const CreateNodePoolRequestSchema = z
  .strictObject({
    name: NameSchema,
    /** Node names are `<nodeNamePrefix>-<n>`. */
    nodeNamePrefix: NameSchema.refine(
      (s) => s.length <= 50,
      "must be at most 50 characters (room for the node suffix)",
    ),
    desiredNodeCount: DesiredNodeCountSchema,
    clusterID: IdSchema,
    role: NodePoolRoleSchema.default("worker"),
    nodePoolReleaseName: NameSchema.optional(),
    nico: NicoPayloadSchema.optional(),
    infra: InfraPayloadSchema.optional(),
    labels: LabelsSchema.optional(),
    taints: z.array(TaintSchema).optional(),
  })
  .superRefine(exactlyOnePayload, alwaysOnObjects);
export type CreateNodePoolRequest = z.input<typeof CreateNodePoolRequestSchema>;

export const NodeStateSchema = z.enum(["Pending", "Provisioning", "Running", "Draining"]);
export type NodeState = z.infer<typeof NodeStateSchema>;

export const NodePoolPhaseSchema = z.enum(["Provisioning", "Ready", "Scaling", "Deleting", "Failed"]);
export type NodePoolPhase = z.infer<typeof NodePoolPhaseSchema>;

export const NodePoolStatusSchema = z.object({
  phase: NodePoolPhaseSchema,
  message: z.string().optional(),
  /** Nodes Running. */
  readyNodes: z.int(),
  /** Nodes Pending or Provisioning. */
  pendingNodes: z.int(),
  nodes: z.array(z.object({ name: z.string(), state: NodeStateSchema })),
});
export type NodePoolStatus = z.infer<typeof NodePoolStatusSchema>;

export const NodePoolSchema = z.object({
  id: IdSchema,
  name: NameSchema,
  clusterID: IdSchema,
  clusterName: NameSchema,
  nodeNamePrefix: z.string(),
  desiredNodeCount: z.int(),
  role: NodePoolRoleSchema,
  nodePoolReleaseName: z.string().optional(),
  nico: z.object({ ...NicoPayloadSchema.shape }).optional(),
  infra: z.object({ ...InfraPayloadSchema.shape }).optional(),
  labels: z.record(z.string(), z.string()),
  taints: z.array(z.object({ ...TaintSchema.shape })),
  status: NodePoolStatusSchema,
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
});
export type NodePool = z.infer<typeof NodePoolSchema>;

/** A JSON merge patch for a node pool. Scaling is `{ "desiredNodeCount": N }`. */
export const NodePoolPatchSchema = z.strictObject({
  desiredNodeCount: DesiredNodeCountSchema.optional(),
  nodePoolReleaseName: NameSchema.nullable().optional(),
  labels: z.record(z.string().min(1), z.string().max(63).nullable()).nullable().optional(),
  taints: z.array(TaintSchema).nullable().optional(),
});
export type NodePoolPatch = z.input<typeof NodePoolPatchSchema>;

export const NODEPOOL_IMMUTABLE_FIELDS = ["name", "clusterID", "nodeNamePrefix", "role", "nico", "infra"] as const;
export const NODEPOOL_READ_ONLY_FIELDS = ["id", "clusterName", "status", "createdAt", "updatedAt"] as const;

// ---------------------------------------------------------------------------------------
// Releases: MachineImage, ClusterRelease, NodePoolRelease

export const ArchitectureSchema = z.enum(["amd64", "arm64"]);

export const CreateMachineImageRequestSchema = z.strictObject({
  name: NameSchema,
  version: VersionSchema,
  description: z.string().max(1024).optional(),
  kubernetesVersion: KubernetesVersionSchema,
  os: z.strictObject({ distribution: z.string().min(1), version: z.string().min(1) }),
  architecture: ArchitectureSchema,
  /** The bootable image (disk or OCI artifact), pinned by digest. */
  image: ImageReferenceSchema,
  format: z.enum(["qcow2", "raw", "oci"]).default("qcow2"),
  labels: LabelsSchema.optional(),
});
export type CreateMachineImageRequest = z.input<typeof CreateMachineImageRequestSchema>;

export const MachineImageSchema = z.object({
  id: IdSchema,
  name: NameSchema,
  version: z.string(),
  description: z.string().optional(),
  kubernetesVersion: z.string(),
  os: z.object({ distribution: z.string(), version: z.string() }),
  architecture: ArchitectureSchema,
  image: z.string(),
  /** The digest part of `image`. */
  digest: DigestSchema,
  format: z.string(),
  labels: z.record(z.string(), z.string()),
  createdAt: z.iso.datetime(),
});
export type MachineImage = z.infer<typeof MachineImageSchema>;

export const ReleaseComponentSchema = z.strictObject({
  name: z.string().min(1),
  version: z.string().min(1),
  image: ImageReferenceSchema,
});
export type ReleaseComponent = z.infer<typeof ReleaseComponentSchema>;

export const ReleaseChartSchema = z.strictObject({
  name: z.string().min(1),
  version: z.string().min(1),
  /** An OCI chart repository (oci://…) or an HTTPS chart repository. */
  repository: z.string().regex(/^(oci|https):\/\/\S+$/, "must be an oci:// or https:// chart repository"),
  digest: DigestSchema,
});
export type ReleaseChart = z.infer<typeof ReleaseChartSchema>;

export const CreateClusterReleaseRequestSchema = z.strictObject({
  name: NameSchema,
  version: VersionSchema,
  description: z.string().max(1024).optional(),
  kubernetesVersion: KubernetesVersionSchema,
  /** The control-plane MachineImage; its kubernetesVersion must match. */
  machineImageName: NameSchema,
  components: z.array(ReleaseComponentSchema).min(1, "must list at least one component"),
  charts: z.array(ReleaseChartSchema).optional(),
  labels: LabelsSchema.optional(),
});
export type CreateClusterReleaseRequest = z.input<typeof CreateClusterReleaseRequestSchema>;

const releaseObjectFields = {
  id: IdSchema,
  name: NameSchema,
  version: z.string(),
  description: z.string().optional(),
  kubernetesVersion: z.string(),
  machineImageName: z.string(),
  machineImageID: IdSchema,
  components: z.array(z.object({ ...ReleaseComponentSchema.shape })),
  labels: z.record(z.string(), z.string()),
  createdAt: z.iso.datetime(),
};

export const ClusterReleaseSchema = z.object({
  ...releaseObjectFields,
  charts: z.array(z.object({ ...ReleaseChartSchema.shape })),
});
export type ClusterRelease = z.infer<typeof ClusterReleaseSchema>;

export const CreateNodePoolReleaseRequestSchema = z.strictObject({
  name: NameSchema,
  version: VersionSchema,
  description: z.string().max(1024).optional(),
  kubernetesVersion: KubernetesVersionSchema,
  /** The worker MachineImage; its kubernetesVersion must match. */
  machineImageName: NameSchema,
  /** The ClusterRelease these nodes are built to join, when restricted to one. */
  clusterReleaseName: NameSchema.optional(),
  components: z.array(ReleaseComponentSchema).default([]),
  labels: LabelsSchema.optional(),
});
export type CreateNodePoolReleaseRequest = z.input<typeof CreateNodePoolReleaseRequestSchema>;

export const NodePoolReleaseSchema = z.object({
  ...releaseObjectFields,
  clusterReleaseName: z.string().optional(),
});
export type NodePoolRelease = z.infer<typeof NodePoolReleaseSchema>;

// ---------------------------------------------------------------------------------------
// Envelopes

/** A page of a list: `continue` is present when more follow; pass it back unchanged. */
export function listSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), continue: z.string().optional() });
}
export interface List<T> {
  items: T[];
  continue?: string;
}

export const ClusterListSchema = listSchema(ClusterSchema);
export const NodePoolListSchema = listSchema(NodePoolSchema);
export const MachineImageListSchema = listSchema(MachineImageSchema);
export const ClusterReleaseListSchema = listSchema(ClusterReleaseSchema);
export const NodePoolReleaseListSchema = listSchema(NodePoolReleaseSchema);

export const HealthSchema = z.object({ status: z.literal("ok") });

/** The controller's error body, for every status ≥ 400. */
export const ApiErrorBodySchema = z.object({
  error: z.object({
    /** The HTTP status, repeated. */
    code: z.int(),
    /** A stable CamelCase reason: BadRequest, Unauthorized, Forbidden, NotFound, Conflict, Invalid, … */
    reason: z.string(),
    /** What went wrong, in the controller's own words; clients show it verbatim. */
    message: z.string(),
    /** For Invalid (422): one entry per offending field. */
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBodySchema>;
export type ApiErrorDetail = NonNullable<ApiErrorBody["error"]["details"]>[number];

export const API_ERROR_REASONS = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  415: "UnsupportedMediaType",
  422: "Invalid",
  500: "InternalError",
  503: "ServiceUnavailable",
} as const;

/** Paging limits every list route honours. */
export const LIST_LIMIT_DEFAULT = 500;
export const LIST_LIMIT_MAX = 1000;

export const MERGE_PATCH_CONTENT_TYPE = "application/merge-patch+json";
