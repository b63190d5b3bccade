import {
  AgentSchema,
  HealthReportSchema,
  type OffloadingNamespace,
  type PeeringParameters,
  PeeringStateSchema,
} from "@nodekit/noderings-api";
import * as z from "zod";

/** How long the emulated platform takes for its asynchronous steps. */
export interface Timing {
  /** Inbound peering: requested → Established (or Failed). */
  inboundMs: number;
}

export const DEFAULT_TIMING: Timing = { inboundMs: 3_000 };

/** What the emulated platform is: its Liqo side and its offloading rules. */
export interface Platform extends Omit<PeeringParameters, "liqoVersion"> {
  requiredNamespaces: OffloadingNamespace[];
  optional: {
    podOffloadingStrategy: "Local" | "Remote" | "LocalAndRemote";
    namespaceMappingStrategy: "EnforceSameName" | "DefaultName" | "SelectedName";
    forbidden: string[];
    max: number;
  };
  /** NodeRings' API server for peering, as the one-time kubeconfigs (peering user, consumer credential) name it. */
  peeringServer: string;
}

export const DEFAULT_PLATFORM: Platform = {
  platformClusterId: "noderings-emulator",
  network: { reservedCIDRs: ["10.100.0.0/16", "10.101.0.0/16", "10.70.0.0/16"] },
  gateway: { serverLocation: "Provider", serviceType: "NodePort", port: 51840, mtu: 1340 },
  resources: { cpu: "4", memory: "8Gi", pods: "110" },
  inBand: true,
  // The reverse peering: NodeRings the consumer runs the gateway server again (the agent
  // still only dials out), and asks the agent for a small share of its own.
  inbound: {
    gateway: { serverLocation: "Consumer", serviceType: "NodePort", port: 51840, mtu: 1340 },
    resources: { cpu: "2", memory: "4Gi", pods: "110" },
    inBand: true,
  },
  peeringServer: "https://peering.noderings-emulator.invalid:6443",
  requiredNamespaces: [
    {
      name: "nr-vnc-gateway",
      purpose: "vnc-gateway",
      podOffloadingStrategy: "Remote",
      namespaceMappingStrategy: "EnforceSameName",
    },
  ],
  optional: {
    podOffloadingStrategy: "LocalAndRemote",
    namespaceMappingStrategy: "DefaultName",
    forbidden: ["default", "kube-system", "kube-public", "kube-node-lease", "liqo", "calico-system", "tigera-operator"],
    max: 10,
  },
};

// The state file: validated at start with the same located problems as any document.

const Direction = z.strictObject({
  state: PeeringStateSchema,
  message: z.string().optional(),
  updatedAt: z.string().optional(),
});

const AgentRecordSchema = z.strictObject({
  /** The account (token owner) the agent belongs to; agent names are unique per account. */
  account: z.string().min(1),
  agent: AgentSchema,
  peering: z.strictObject({
    clusterId: z.string().optional(),
    liqoVersion: z.string().optional(),
    podCIDR: z.string().optional(),
    serviceCIDR: z.string().optional(),
    outbound: Direction,
    inbound: Direction,
    /** When the inbound peering is due to settle (ms since the epoch). */
    inboundDueMs: z.number().optional(),
    /** A failure a test asked for: inbound settles as Failed with this message. */
    inboundFailure: z.string().optional(),
    /** The issued peering user: its name and expiry (the token is in the answer only, and in that answer's idempotency record). */
    peeringUser: z.strictObject({ user: z.string(), expiresAt: z.string() }).optional(),
    /** The issued consumer credential for the reverse peering (the token, as the peering user's, only in the answer). */
    consumerUser: z.strictObject({ user: z.string(), expiresAt: z.string() }).optional(),
  }),
  offloading: z.strictObject({ offloaded: z.array(z.string()), updatedAt: z.string().optional() }),
  healthReports: z.array(HealthReportSchema),
});
export type AgentRecord = z.infer<typeof AgentRecordSchema>;

const IdempotencyRecordSchema = z.strictObject({
  account: z.string(),
  /** What the first request was: method, path and a hash of its body. */
  fingerprint: z.string(),
  status: z.int(),
  body: z.unknown(),
  createdMs: z.number(),
});

export const StateFileSchema = z.strictObject({
  kind: z.literal("NodeRingsEmulatorState", {
    error: 'must be "NodeRingsEmulatorState": this is not a NodeRings emulator state file',
  }),
  version: z.literal(1, { error: "must be 1" }),
  agents: z.record(z.string(), AgentRecordSchema),
  idempotency: z.record(z.string(), IdempotencyRecordSchema),
});
export type EmulatorState = z.infer<typeof StateFileSchema>;

export function emptyState(): EmulatorState {
  return { kind: "NodeRingsEmulatorState", version: 1, agents: {}, idempotency: {} };
}

export const iso = (ms: number) => new Date(ms).toISOString();
