import { DNS_LABEL_MAX_LENGTH, DNS_LABEL_PATTERN } from "@nodekit/documents";
import * as z from "zod";
import { labelKeyFault, labelValueFault } from "./labels.ts";

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

/** A label or taint value, as Kubernetes takes it: at most 63 characters of letters, digits, '-', '_' and '.' (or empty). */
export const LabelValueSchema = z.string().superRefine((value, ctx) => {
  const fault = labelValueFault(value);
  if (fault !== undefined) ctx.addIssue({ code: "custom", message: fault });
});

/** A label or taint key, as Kubernetes takes it: `[prefix/]name` (a qualified name). */
export const LabelKeySchema = z.string().superRefine((key, ctx) => {
  const fault = labelKeyFault(key);
  if (fault !== undefined) ctx.addIssue({ code: "custom", message: `is not a valid key: it ${fault}` });
});

/**
 * Labels: every key a qualified name and every value a label value, as Kubernetes checks
 * them (the controller puts them on the cluster's objects). A bad key is reported on the
 * labels, naming the key (at the key's own path the problem would quote its value).
 */
function labelsOf<V extends z.ZodType>(value: V) {
  return z.record(z.string(), value).superRefine(
    (labels, ctx) => {
      for (const key of Object.keys(labels)) {
        const fault = labelKeyFault(key);
        if (fault !== undefined) {
          ctx.addIssue({
            code: "custom",
            message: `has a key ${JSON.stringify(key)} that is not a valid label key: it ${fault}`,
          });
        }
      }
    },
    { when: (payload) => typeof payload.value === "object" && payload.value !== null },
  );
}

export const LabelsSchema = labelsOf(LabelValueSchema);

/** Labels in a merge patch: null removes one. */
const LabelsPatchSchema = labelsOf(LabelValueSchema.nullable());

export const ProviderSchema = z.enum(["capd", "nico"], unlessMissing('must be "capd" or "nico"'));
export type Provider = z.infer<typeof ProviderSchema>;

/** Machines from NICo (NVIDIA Infrastructure Controller): the instance type is the node type. */
export const NicoPayloadSchema = z.strictObject({
  /** NICo instance type; chooses the node hardware. */
  instanceType: z.string().min(1, "must not be empty").describe("NICo instance type: it chooses the node hardware."),
  /** NICo VPC the machines join; the site default when omitted. */
  vpcID: z.string().min(1).optional().describe("NICo VPC the machines join; the site's default when omitted."),
  /** NICo subnet (or VPC prefix) for the machines' primary interface. */
  subnetID: z.string().min(1).optional().describe("NICo subnet (or VPC prefix) for the machines' primary interface."),
  /** NICo SSH key groups installed on the machines. */
  sshKeyGroupIDs: z.array(z.string().min(1)).optional().describe("NICo SSH key groups installed on the machines."),
  /** A MachineImage by name; the release's image when omitted. */
  machineImageName: NameSchema.optional().describe("A MachineImage by name; the release's image when omitted."),
});
export type NicoPayload = z.infer<typeof NicoPayloadSchema>;

/** Machines from another Cluster API infrastructure provider (e.g. CAPD): its machine template. */
export const InfraPayloadSchema = z.strictObject({
  machineTemplate: z
    .strictObject({
      apiVersion: z.string().min(1, "must not be empty").describe("The machine template's apiVersion."),
      kind: z.string().min(1, "must not be empty").describe("The machine template's kind, e.g. DockerMachineTemplate."),
      /** The provider's machine template spec, passed through as given. */
      spec: z
        .record(z.string(), z.unknown())
        .default({})
        .describe("The provider's machine template spec, passed through as given."),
    })
    .describe("The infrastructure provider's machine template."),
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
// Field descriptions: what `GET /api/docs` says of each field (and `nvkectl explain` shows).

const DESCRIBE = {
  clusterName: "The cluster's name: a DNS-1123 label, unique on the site; part of its Secrets' names.",
  description: "Free text for people, at most 1024 characters.",
  provider:
    "Where the machines come from: nico (NVIDIA Infrastructure Controller) or capd (Cluster API's Docker provider).",
  clusterReleaseName:
    "The ClusterRelease (Kubernetes version, machine image, components) by name; give this or clusterReleaseID.",
  clusterReleaseID: "The ClusterRelease by ID; give this or clusterReleaseName.",
  controlPlaneConfig: "The control plane: how many machines, and the prefix of their node names.",
  replicas: "Control-plane machines: 1, 3, 5 or 7 (odd, so that etcd keeps quorum).",
  cpNodeNamePrefix:
    "Prefix of control-plane node names (<prefix>-<n>); <cluster>-cp when omitted. Fixed once nodes exist.",
  network: "The cluster's pod and service networks. Fixed once the cluster exists.",
  podCIDR: "The pod network (IPv4 or IPv6 CIDR); each node takes one block of it.",
  serviceCIDR: "The service network (CIDR); must not overlap podCIDR.",
  nodeCIDRMaskSize: "The size of each node's block of podCIDR (default 24); it bounds how many nodes fit.",
  nico: "Machines from NICo: the instance type (the node type) and where they join. Give this or infra.",
  infra: "Machines from another Cluster API infrastructure provider: its machine template. Give this or nico.",
  labels: "Labels: keys [prefix/]name, values at most 63 characters, as Kubernetes takes them.",
  id: "The controller's ID for the object (a UUID).",
  kubernetesVersion: "The Kubernetes version, from the release.",
  status: "What the controller observed; set by the controller only.",
  createdAt: "When the object was created (RFC 3339).",
  updatedAt: "When the object last changed (RFC 3339).",
  poolName: "The node pool's name: a DNS-1123 label, unique within its cluster.",
  poolNodeNamePrefix:
    "Node names are <nodeNamePrefix>-<n>; unique within the cluster, at most 50 characters. Fixed once the pool exists.",
  desiredNodeCount:
    "How many nodes the pool should have (0 to 5000); scaling down removes only nodes not yet provisioning.",
  clusterID: "The cluster the pool belongs to, by ID: the id field of the cluster object.",
  role: "worker (the default), or control-plane.",
  nodePoolReleaseName:
    "The NodePoolRelease the nodes are built from; never newer than the cluster's control plane. The cluster's release when omitted.",
  taints: "Taints put on every node of the pool.",
  conditions:
    "The controller's view as conditions, Kubernetes style: type, status (True, False, Unknown), reason, message, lastTransitionTime.",
} as const;

// ---------------------------------------------------------------------------------------
// Clusters

export const ControlPlaneConfigSchema = z.strictObject({
  /** Control-plane machines; odd so that etcd keeps quorum. */
  replicas: z
    .int(unlessMissing("must be a whole number"))
    .min(1, "must be at least 1")
    .max(7, "must be at most 7")
    .refine((n) => n % 2 === 1, "must be odd (1, 3, 5 or 7) so that etcd keeps quorum")
    .describe(DESCRIBE.replicas),
  /** Prefix of control-plane node names; `<cluster>-cp` when omitted. */
  nodeNamePrefix: NameSchema.optional().describe(DESCRIBE.cpNodeNamePrefix),
});
export type ControlPlaneConfig = z.infer<typeof ControlPlaneConfigSchema>;

export const ClusterNetworkSchema = z
  .strictObject({
    podCIDR: CidrSchema.describe(DESCRIBE.podCIDR),
    serviceCIDR: CidrSchema.describe(DESCRIBE.serviceCIDR),
    /** Each node takes one block of this size from podCIDR; this bounds the cluster's node count. */
    nodeCIDRMaskSize: z
      .int(unlessMissing("must be a whole number"))
      .min(8)
      .max(126)
      .default(24)
      .describe(DESCRIBE.nodeCIDRMaskSize),
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
  clusterReleaseName: NameSchema.optional().describe(DESCRIBE.clusterReleaseName),
  /** The ClusterRelease by ID (give this or clusterReleaseName). */
  clusterReleaseID: IdSchema.optional().describe(DESCRIBE.clusterReleaseID),
};

export const CreateClusterRequestSchema = z
  .strictObject({
    name: NameSchema.describe(DESCRIBE.clusterName),
    description: z.string().max(1024).optional().describe(DESCRIBE.description),
    provider: ProviderSchema.describe(DESCRIBE.provider),
    ...clusterReleaseRef,
    controlPlaneConfig: ControlPlaneConfigSchema.describe(DESCRIBE.controlPlaneConfig),
    network: ClusterNetworkSchema.describe(DESCRIBE.network),
    nico: NicoPayloadSchema.optional().describe(DESCRIBE.nico),
    infra: InfraPayloadSchema.optional().describe(DESCRIBE.infra),
    labels: LabelsSchema.optional().describe(DESCRIBE.labels),
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

/** One condition, as Kubernetes and Cluster API objects carry them. */
export const ConditionSchema = z.object({
  type: z.string().describe("What the condition is about: Ready, ControlPlaneReady, WorkersReady, Deleting, …"),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string().optional().describe("A CamelCase word for why the status is what it is."),
  message: z.string().optional().describe("The same, in the controller's words."),
  lastTransitionTime: z.iso.datetime().describe("When status last changed (RFC 3339)."),
});
export type Condition = z.infer<typeof ConditionSchema>;

export const ClusterStatusSchema = z.object({
  phase: ClusterPhaseSchema.describe("Provisioning, Ready, Deleting or Failed."),
  /** What the controller is doing or why it failed, in its own words. */
  message: z.string().optional().describe("What the controller is doing, or why the cluster failed, in its own words."),
  controlPlaneReady: z.boolean().describe("Whether the control plane answers."),
  /** `https://<host>:6443` once the control plane has one. */
  controlPlaneEndpoint: z.string().optional().describe("The API server's URL, https://<host>:6443, once it has one."),
  /** The Cluster API Secret holding the tenant kubeconfig (data key `value`), once Ready. */
  kubeconfigSecret: z
    .object({ namespace: z.string(), name: z.string() })
    .optional()
    .describe("The Secret on the site cluster holding the tenant kubeconfig (data key value), once Ready."),
  /** Absent from controllers that predate conditions. */
  conditions: z.array(ConditionSchema).optional().describe(DESCRIBE.conditions),
});
export type ClusterStatus = z.infer<typeof ClusterStatusSchema>;

/**
 * A cluster's or node pool's payload as the controller returns it: the request's fields, in a
 * plain (not strict) object, so a field a newer controller adds does not fail the read.
 */
const payloadAsReturned = {
  nico: z
    .object({ ...NicoPayloadSchema.shape })
    .optional()
    .describe(DESCRIBE.nico),
  infra: z
    .object({ ...InfraPayloadSchema.shape })
    .optional()
    .describe(DESCRIBE.infra),
};

export const ClusterSchema = z.object({
  id: IdSchema.describe(DESCRIBE.id),
  name: NameSchema.describe(DESCRIBE.clusterName),
  description: z.string().optional().describe(DESCRIBE.description),
  provider: ProviderSchema.describe(DESCRIBE.provider),
  clusterReleaseID: IdSchema.describe("The ClusterRelease the control plane runs, by ID."),
  clusterReleaseName: NameSchema.describe("The ClusterRelease the control plane runs, by name."),
  kubernetesVersion: z.string().describe(DESCRIBE.kubernetesVersion),
  controlPlaneConfig: z
    .object({
      replicas: z.int().describe(DESCRIBE.replicas),
      nodeNamePrefix: z.string().describe(DESCRIBE.cpNodeNamePrefix),
    })
    .describe(DESCRIBE.controlPlaneConfig),
  network: z
    .object({
      podCIDR: z.string().describe(DESCRIBE.podCIDR),
      serviceCIDR: z.string().describe(DESCRIBE.serviceCIDR),
      nodeCIDRMaskSize: z.int().describe(DESCRIBE.nodeCIDRMaskSize),
    })
    .describe(DESCRIBE.network),
  ...payloadAsReturned,
  labels: z.record(z.string(), z.string()).describe(DESCRIBE.labels),
  status: ClusterStatusSchema.describe(DESCRIBE.status),
  createdAt: z.iso.datetime().describe(DESCRIBE.createdAt),
  updatedAt: z.iso.datetime().describe(DESCRIBE.updatedAt),
});
export type Cluster = z.infer<typeof ClusterSchema>;

/**
 * A JSON merge patch (RFC 7396) for a cluster: only the fields given change, `null`
 * clears an optional field (or a label). name, provider, network and the nico/infra
 * payload are immutable (422); id, status and timestamps belong to the controller.
 */
export const ClusterPatchSchema = z.strictObject({
  description: z.string().max(1024).nullable().optional().describe(`${DESCRIBE.description} null removes it.`),
  clusterReleaseName: NameSchema.optional().describe(
    "Move the control plane to this ClusterRelease: one minor version at a time, never down.",
  ),
  clusterReleaseID: IdSchema.optional().describe("The same, by ID."),
  controlPlaneConfig: z
    .strictObject({
      replicas: ControlPlaneConfigSchema.shape.replicas.optional(),
      nodeNamePrefix: NameSchema.optional().describe(DESCRIBE.cpNodeNamePrefix),
    })
    .optional()
    .describe(DESCRIBE.controlPlaneConfig),
  labels: LabelsPatchSchema.nullable()
    .optional()
    .describe("Labels to set; a label set to null is removed, and labels: null removes them all."),
});
export type ClusterPatch = z.input<typeof ClusterPatchSchema>;

// ---------------------------------------------------------------------------------------
// Node pools

export const NodePoolRoleSchema = z.enum(["worker", "control-plane"]);
export type NodePoolRole = z.infer<typeof NodePoolRoleSchema>;

export const TaintSchema = z.strictObject({
  key: LabelKeySchema.describe("The taint's key: [prefix/]name, as a label key."),
  value: LabelValueSchema.optional().describe("The taint's value, as a label value."),
  effect: z
    .enum(["NoSchedule", "PreferNoSchedule", "NoExecute"])
    .describe("NoSchedule, PreferNoSchedule or NoExecute."),
});
export type Taint = z.infer<typeof TaintSchema>;

export const DesiredNodeCountSchema = z
  .int(unlessMissing("must be a whole number"))
  .min(0, "must be 0 or more")
  .max(5000, "must be at most 5000");

export const CreateNodePoolRequestSchema = z
  .strictObject({
    name: NameSchema.describe(DESCRIBE.poolName),
    /** Node names are `<nodeNamePrefix>-<n>`. */
    nodeNamePrefix: NameSchema.refine(
      (s) => s.length <= 50,
      "must be at most 50 characters (room for the node suffix)",
    ).describe(DESCRIBE.poolNodeNamePrefix),
    desiredNodeCount: DesiredNodeCountSchema.describe(DESCRIBE.desiredNodeCount),
    clusterID: IdSchema.describe(DESCRIBE.clusterID),
    role: NodePoolRoleSchema.default("worker").describe(DESCRIBE.role),
    nodePoolReleaseName: NameSchema.optional().describe(DESCRIBE.nodePoolReleaseName),
    nico: NicoPayloadSchema.optional().describe(DESCRIBE.nico),
    infra: InfraPayloadSchema.optional().describe(DESCRIBE.infra),
    labels: LabelsSchema.optional().describe(DESCRIBE.labels),
    taints: z.array(TaintSchema).optional().describe(DESCRIBE.taints),
  })
  .superRefine(exactlyOnePayload, alwaysOnObjects);
export type CreateNodePoolRequest = z.input<typeof CreateNodePoolRequestSchema>;

export const NodeStateSchema = z.enum(["Pending", "Provisioning", "Running", "Draining"]);
export type NodeState = z.infer<typeof NodeStateSchema>;

export const NodePoolPhaseSchema = z.enum(["Provisioning", "Ready", "Scaling", "Deleting", "Failed"]);
export type NodePoolPhase = z.infer<typeof NodePoolPhaseSchema>;

export const NodePoolStatusSchema = z.object({
  phase: NodePoolPhaseSchema.describe("Provisioning, Ready, Scaling, Deleting or Failed."),
  message: z.string().optional().describe("What the controller is doing with the pool, in its own words."),
  /** Nodes Running. */
  readyNodes: z.int().describe("Nodes Running."),
  /** Nodes Pending or Provisioning. */
  pendingNodes: z.int().describe("Nodes Pending or Provisioning."),
  nodes: z
    .array(
      z.object({
        name: z.string().describe("The node's name, <nodeNamePrefix>-<n>."),
        state: NodeStateSchema.describe("Pending, Provisioning, Running or Draining."),
        /** Absent from controllers that predate it. */
        lastTransitionTime: z.iso.datetime().optional().describe("When the node entered its state (RFC 3339)."),
      }),
    )
    .describe("Each node of the pool and its state."),
});
export type NodePoolStatus = z.infer<typeof NodePoolStatusSchema>;

export const NodePoolSchema = z.object({
  id: IdSchema.describe(DESCRIBE.id),
  name: NameSchema.describe(DESCRIBE.poolName),
  clusterID: IdSchema.describe(DESCRIBE.clusterID),
  clusterName: NameSchema.describe("The cluster the pool belongs to, by name."),
  nodeNamePrefix: z.string().describe(DESCRIBE.poolNodeNamePrefix),
  desiredNodeCount: z.int().describe(DESCRIBE.desiredNodeCount),
  role: NodePoolRoleSchema.describe(DESCRIBE.role),
  nodePoolReleaseName: z.string().optional().describe(DESCRIBE.nodePoolReleaseName),
  ...payloadAsReturned,
  labels: z.record(z.string(), z.string()).describe(DESCRIBE.labels),
  taints: z
    .array(z.object({ key: z.string(), value: z.string().optional(), effect: TaintSchema.shape.effect }))
    .describe(DESCRIBE.taints),
  status: NodePoolStatusSchema.describe(DESCRIBE.status),
  createdAt: z.iso.datetime().describe(DESCRIBE.createdAt),
  updatedAt: z.iso.datetime().describe(DESCRIBE.updatedAt),
});
export type NodePool = z.infer<typeof NodePoolSchema>;

/** A JSON merge patch for a node pool. Scaling is `{ "desiredNodeCount": N }`. */
export const NodePoolPatchSchema = z.strictObject({
  desiredNodeCount: DesiredNodeCountSchema.optional().describe(DESCRIBE.desiredNodeCount),
  nodePoolReleaseName: NameSchema.nullable()
    .optional()
    .describe(`${DESCRIBE.nodePoolReleaseName} null drops the pinned release.`),
  labels: LabelsPatchSchema.nullable()
    .optional()
    .describe("Labels to set; a label set to null is removed, and labels: null removes them all."),
  taints: z
    .array(TaintSchema)
    .nullable()
    .optional()
    .describe("The pool's taints, all of them (a list replaces the list); null removes them."),
});
export type NodePoolPatch = z.input<typeof NodePoolPatchSchema>;

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

/** The fields both release requests begin with; the MachineImage they are built on follows. */
const releaseRequestFields = {
  name: NameSchema,
  version: VersionSchema,
  description: z.string().max(1024).optional(),
  kubernetesVersion: KubernetesVersionSchema,
};

export const CreateClusterReleaseRequestSchema = z.strictObject({
  ...releaseRequestFields,
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
  ...releaseRequestFields,
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
