import * as z from "zod";

// The NodeRings API contract. Request schemas are strict (an unknown field is a 422, as
// the service answers it); object schemas ignore fields they do not know, so a client
// keeps working against a newer service. Nothing a client sends carries a secret: the
// only credentials in the contract are the one-time tokens the platform issues to the
// agent for its own cluster (OutboundPeering.peeringUser, InboundPeering.consumerUser).

// ---------------------------------------------------------------------------------------
// Shared pieces

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** An RFC 1123 label: agent names, Liqo cluster ids and namespace names are all of this form. */
export const DnsLabelSchema = z
  .string()
  .min(1, "must not be empty")
  .max(63, "must be at most 63 characters")
  .regex(LABEL, "must consist of lower case letters, digits and '-', and start and end with a letter or digit");

export const IdSchema = z.uuid({ error: (issue) => (issue.input === undefined ? undefined : "must be a UUID") });

export const TimestampSchema = z.iso.datetime({ offset: true });

export const CidrSchema = z.cidrv4({
  error: (issue) => (issue.input === undefined ? undefined : "must be an IPv4 CIDR such as 10.42.0.0/16"),
});

/** A Kubernetes resource quantity as liqoctl takes it (`4`, `500m`, `8Gi`). */
export const QuantitySchema = z
  .string()
  .regex(/^\d+(\.\d+)?(m|k|Ki|M|Mi|G|Gi|T|Ti)?$/, "must be a Kubernetes quantity such as 4, 500m or 8Gi");

export const LabelsSchema = z.record(
  z.string().min(1).max(317, "label keys are at most 317 characters"),
  z.string().max(63, "label values are at most 63 characters"),
);

// ---------------------------------------------------------------------------------------
// Agents

/** Names the service keeps for itself (422 `name_reserved`). */
export const RESERVED_AGENT_NAMES = [
  "noderings",
  "admin",
  "system",
  "platform",
  "default",
  "liqo",
  "localhost",
] as const;

export const AgentStateSchema = z.enum([
  /** Created; nothing is peered yet. */
  "Registered",
  /** Outbound peering started: the platform issued the peering user. */
  "Peering",
  /** Both directions of the peering are established. */
  "Peered",
  /** The last health report passed. */
  "Ready",
  /** The last health report failed (its checks say which). */
  "Degraded",
]);
export type AgentState = z.infer<typeof AgentStateSchema>;

/**
 * Which machine an agent runs on: a keyed SHA-256 of the VM's /etc/machine-id, never the id
 * itself (machine-id(5): it "should be considered confidential"; an application that needs
 * a stable machine identifier hashes it with a fixed, application-specific key).
 */
export const MachineIdSchema = z
  .string()
  .regex(/^[a-f0-9]{64}$/, "must be 64 lowercase hex digits (a keyed hash of /etc/machine-id, not the id itself)");

export const CreateAgentRequestSchema = z.strictObject({
  /** Unique per account; the name `nr cluster register --name` gives. */
  name: DnsLabelSchema,
  description: z.string().max(256, "must be at most 256 characters").optional(),
  labels: LabelsSchema.optional(),
  /** The VM's CPU architecture, so the platform can answer pins for it. */
  architecture: z.enum(["amd64", "arm64", "arm"]).optional(),
  /** The machine registering it: another machine can then not take the agent over by its name. */
  machineId: MachineIdSchema.optional(),
});
export type CreateAgentRequest = z.infer<typeof CreateAgentRequestSchema>;

export const AgentSchema = z.object({
  id: IdSchema,
  name: z.string(),
  description: z.string().optional(),
  labels: LabelsSchema.default({}),
  architecture: z.string().optional(),
  /** The machine that registered it (CreateAgentRequest.machineId); none for an agent created without. */
  machineId: z.string().optional(),
  state: AgentStateSchema,
  /** The agent cluster's Liqo cluster id, once outbound peering started. */
  clusterId: z.string().optional(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type Agent = z.infer<typeof AgentSchema>;

export const AgentListSchema = z.object({ items: z.array(AgentSchema) });
export type AgentList = z.infer<typeof AgentListSchema>;

// ---------------------------------------------------------------------------------------
// Peering (Liqo)
//
// A Liqo peering is one-way, consumer → provider, and `liqoctl peer` needs the kubeconfigs
// of both (liqotech/liqo@v1.0.1 docs/usage/peer.md). Outbound: the agent (consumer) peers
// toward NodeRings (provider) with `liqoctl peer --remote-kubeconfig <peering user>`; the
// platform issues that one-time peering user. Inbound: NodeRings is the consumer, and the
// agent runs the reverse `liqoctl peer --kubeconfig <consumer credential> --remote-kubeconfig
// <its own cluster>` itself, with a one-time consumer credential for NodeRings' cluster that
// the platform issues: no credential of the agent's cluster leaves the agent (liqoctl creates
// the Tenant there with the agent's own kubeconfig). The agent then tells the platform, which
// checks the reverse peering and reports it Established; the agent polls until it is.

/** How the WireGuard gateway pair is set up: `liqoctl peer --gw-server-service-*`, `--mtu`. */
export const GatewaySchema = z.object({
  /** Where the gateway server runs: Provider (NodeRings; the agent dials out, which works behind NAT). */
  serverLocation: z.enum(["Provider", "Consumer"]),
  serviceType: z.enum(["LoadBalancer", "NodePort", "ClusterIP"]),
  /** `--gw-server-service-port` (Liqo's default 51840). */
  port: z.int().min(1).max(65535),
  mtu: z.int().min(576).max(9000),
});
export type Gateway = z.infer<typeof GatewaySchema>;

/** What the agent asks the platform for (`liqoctl peer --cpu --memory --pods`). */
export const ResourceRequestSchema = z.object({ cpu: QuantitySchema, memory: QuantitySchema, pods: QuantitySchema });

export const PeeringParametersSchema = z.object({
  /** The platform cluster's Liqo cluster id (the ForeignCluster's name on the agent). */
  platformClusterId: z.string(),
  /** The Liqo version the platform runs; Liqo peers only the same minor version. */
  liqoVersion: z.string(),
  network: z.object({
    /**
     * CIDRs the agent's pod and service CIDRs must not overlap: the platform's own pod and
     * service CIDRs and Liqo's external CIDR. An outbound request that overlaps is 422.
     */
    reservedCIDRs: z.array(CidrSchema),
  }),
  gateway: GatewaySchema,
  resources: ResourceRequestSchema,
  /** When true, the platform's API server is reached through the tunnel (`liqoctl peer --in-band`). */
  inBand: z.boolean(),
  /**
   * The reverse peering (NodeRings the consumer, the agent the provider), as the agent runs
   * it: the gateway (`--gw-server-service-location Consumer`: NodeRings runs the server
   * again, so the agent still only dials out), what NodeRings asks of the agent
   * (`--cpu --memory --pods`), and `--in-band`.
   */
  inbound: z.object({ gateway: GatewaySchema, resources: ResourceRequestSchema, inBand: z.boolean() }),
});
export type PeeringParameters = z.infer<typeof PeeringParametersSchema>;

export const StartOutboundPeeringRequestSchema = z.strictObject({
  /** The agent cluster's Liqo cluster id (`liqoctl install --cluster-id`). */
  clusterId: DnsLabelSchema,
  /** The Liqo version installed on the agent. */
  liqoVersion: z.string().regex(/^v\d+\.\d+\.\d+$/, "must be a Liqo version such as v1.0.1"),
  /** The agent cluster's pod and service CIDRs (the network plan's). */
  podCIDR: CidrSchema,
  serviceCIDR: CidrSchema,
});
export type StartOutboundPeeringRequest = z.infer<typeof StartOutboundPeeringRequestSchema>;

/**
 * The peering user the platform issued for this agent (what `liqoctl generate
 * peering-user --consumer-cluster-id <agent>` produces on the provider): a kubeconfig's
 * parts. The token is a secret, good for one peering and until `expiresAt`; write it only
 * into a 0600 kubeconfig for liqoctl and delete that file afterwards.
 */
export const PeeringUserSchema = z.object({
  /** The platform's Kubernetes API server for peering. */
  server: z.url(),
  /** The server's CA bundle, base64 PEM (kubeconfig `certificate-authority-data`). */
  certificateAuthorityData: z.string(),
  user: z.string(),
  token: z.string().min(1),
  expiresAt: TimestampSchema,
});
export type PeeringUser = z.infer<typeof PeeringUserSchema>;

export const PeeringStateSchema = z.enum(["None", "Pending", "Established", "Failed"]);
export type PeeringState = z.infer<typeof PeeringStateSchema>;

export const PeeringDirectionSchema = z.object({
  state: PeeringStateSchema,
  /** Why it is in that state (set for Failed), in the platform's words. */
  message: z.string().optional(),
  updatedAt: TimestampSchema.optional(),
});

export const PeeringStatusSchema = z.object({
  agentId: IdSchema,
  clusterId: z.string().optional(),
  platformClusterId: z.string(),
  /** Agent → NodeRings: Pending once the peering user is issued, Established once the agent reported it done. */
  outbound: PeeringDirectionSchema,
  /** NodeRings → agent: Pending after the agent asked for it, Established when the platform completed it. */
  inbound: PeeringDirectionSchema,
});
export type PeeringStatus = z.infer<typeof PeeringStatusSchema>;

export const OutboundPeeringSchema = PeeringParametersSchema.extend({
  status: PeeringStatusSchema,
  peeringUser: PeeringUserSchema,
});
export type OutboundPeering = z.infer<typeof OutboundPeeringSchema>;

/**
 * The answer to an inbound request: the platform's side of the reverse peering. The
 * consumer user is a one-time credential for NodeRings' own cluster (NodeRings is the
 * consumer of the reverse direction), for `liqoctl peer --kubeconfig`: a secret of
 * NodeRings', good for one peering and until `expiresAt`. Write it only into a 0600
 * kubeconfig for liqoctl and delete that file afterwards.
 */
export const InboundPeeringSchema = z.object({ status: PeeringStatusSchema, consumerUser: PeeringUserSchema });
export type InboundPeering = z.infer<typeof InboundPeeringSchema>;

export const CompleteInboundPeeringRequestSchema = z.strictObject({
  /** The agent's Liqo cluster id, as in the outbound and inbound requests. */
  clusterId: DnsLabelSchema,
  /** That the reverse `liqoctl peer` returned: the agent is now NodeRings' provider. */
  reversePeering: z.literal("Done", { error: 'must be "Done": report it only after liqoctl peer returned' }),
});
export type CompleteInboundPeeringRequest = z.infer<typeof CompleteInboundPeeringRequestSchema>;

export const RequestInboundPeeringRequestSchema = z.strictObject({
  /** The agent's Liqo cluster id, as in the outbound request. */
  clusterId: DnsLabelSchema,
  /** That the agent's outbound peering is established (liqoctl peer returned and the ForeignCluster says so). */
  outbound: z.literal("Established", { error: 'must be "Established": report outbound done only after it is' }),
});
export type RequestInboundPeeringRequest = z.infer<typeof RequestInboundPeeringRequestSchema>;

export const TeardownPeeringRequestSchema = z.strictObject({
  /** The agent's Liqo cluster id, as in the outbound request. */
  clusterId: DnsLabelSchema,
});
export type TeardownPeeringRequest = z.infer<typeof TeardownPeeringRequestSchema>;

/**
 * The answer to a teardown request (`nr cluster reset`): `liqoctl unpeer` needs the
 * kubeconfigs of both clusters, as `liqoctl peer` did, so the platform issues again a
 * one-time peering user (for unpeering the outbound direction, the agent the consumer) and
 * a one-time consumer credential (for unpeering the reverse one, NodeRings the consumer).
 * Both are secrets of NodeRings': write each only into a 0600 kubeconfig for liqoctl and
 * delete it afterwards.
 */
export const PeeringTeardownSchema = z.object({
  status: PeeringStatusSchema,
  peeringUser: PeeringUserSchema,
  consumerUser: PeeringUserSchema,
});
export type PeeringTeardown = z.infer<typeof PeeringTeardownSchema>;

// ---------------------------------------------------------------------------------------
// Offloading (`liqoctl offload namespace`)

export const PodOffloadingStrategySchema = z.enum(["Local", "Remote", "LocalAndRemote"]);
export const NamespaceMappingStrategySchema = z.enum(["EnforceSameName", "DefaultName", "SelectedName"]);

export const OffloadingNamespaceSchema = z.object({
  name: z.string(),
  /** Why the platform needs it (`vnc-gateway`), for a required namespace. */
  purpose: z.string().optional(),
  podOffloadingStrategy: PodOffloadingStrategySchema,
  namespaceMappingStrategy: NamespaceMappingStrategySchema,
});
export type OffloadingNamespace = z.infer<typeof OffloadingNamespaceSchema>;

export const OffloadingTargetsSchema = z.object({
  agentId: IdSchema,
  /** Namespaces every agent offloads: the VNC gateway's, always. */
  required: z.array(OffloadingNamespaceSchema),
  /** How optional namespaces (`--offload-namespace`) are offloaded, and which names may not be. */
  optional: z.object({
    podOffloadingStrategy: PodOffloadingStrategySchema,
    namespaceMappingStrategy: NamespaceMappingStrategySchema,
    forbidden: z.array(z.string()),
    max: z.int(),
  }),
  /** What the agent last reported as offloaded. */
  offloaded: z.array(z.string()),
  updatedAt: TimestampSchema.optional(),
});
export type OffloadingTargets = z.infer<typeof OffloadingTargetsSchema>;

export const ReportOffloadingRequestSchema = z.strictObject({
  /** Every namespace now offloaded: the required ones and the optional ones. Replaces the previous report. */
  namespaces: z.array(DnsLabelSchema).max(64, "must name at most 64 namespaces"),
});
export type ReportOffloadingRequest = z.infer<typeof ReportOffloadingRequestSchema>;

// ---------------------------------------------------------------------------------------
// Health reports (the verify phase's pass/fail gate)

export const CheckResultSchema = z.enum(["pass", "fail", "skip"]);

export const HealthCheckSchema = z.strictObject({
  /** A stable id such as `k3s-node-ready`, `calico-ready`, `liqo-inbound`. */
  id: DnsLabelSchema,
  result: CheckResultSchema,
  /** What was found, for a failed or skipped check. Never a secret. */
  message: z.string().max(1024, "must be at most 1024 characters").optional(),
});
export type HealthCheck = z.infer<typeof HealthCheckSchema>;

export const CreateHealthReportRequestSchema = z.strictObject({
  /** `fail` when any check failed; `pass` otherwise (a pass with a failed check is 422). */
  result: z.enum(["pass", "fail"]),
  checks: z.array(HealthCheckSchema).min(1, "must list at least one check").max(200, "must list at most 200 checks"),
  observedAt: TimestampSchema,
  /** The pin set the agent was installed with (`sha256:…`, version-pins' hash), for support. */
  pinSetHash: z
    .string()
    .regex(/^sha256:[a-f0-9]{64}$/, "must be sha256:<64 hex digits>")
    .optional(),
  /** The reporting tool's version. */
  reporter: z.string().max(100).optional(),
});
export type CreateHealthReportRequest = z.infer<typeof CreateHealthReportRequestSchema>;

export const HealthReportSchema = z.object({
  id: IdSchema,
  agentId: IdSchema,
  result: z.enum(["pass", "fail"]),
  checks: z.array(z.object({ id: z.string(), result: CheckResultSchema, message: z.string().optional() })),
  observedAt: TimestampSchema,
  receivedAt: TimestampSchema,
  /** The agent's state after this report (Ready or Degraded). */
  agentState: AgentStateSchema,
});
export type HealthReport = z.infer<typeof HealthReportSchema>;

// ---------------------------------------------------------------------------------------
// Errors

/** The `code` of an error body: stable, snake_case, one per kind of refusal. */
export const API_ERROR_CODES = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  name_taken: 409,
  idempotency_key_in_use: 409,
  unsupported_media_type: 415,
  invalid: 422,
  name_reserved: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;
export type ApiErrorCode = keyof typeof API_ERROR_CODES;

/**
 * Every error answer: `{ error: { code, message, details?, requestId } }`. `message` is
 * the service's own words (clients show it verbatim); `details` name each offending field
 * for 422; 429 and 503 carry `Retry-After` (seconds).
 */
export const ApiErrorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    /** Quote it to NodeRings support. */
    requestId: z.string().optional(),
  }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBodySchema>;
export type ApiErrorDetail = NonNullable<ApiErrorBody["error"]["details"]>[number];

export const HealthSchema = z.object({ status: z.literal("ok") });

/** The header a POST may carry so that a retry is answered with the first answer, never done twice. */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
