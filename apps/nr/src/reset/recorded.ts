import type { RunState } from "@nodekit/phase-runner";
import * as z from "zod";
import { RecordedPins, recorded } from "../register/meta.ts";
import { agent } from "../register/phases/agent.ts";
import { calico } from "../register/phases/calico.ts";
import { inboundPeering } from "../register/phases/inbound-peering.ts";
import { k3s } from "../register/phases/k3s.ts";
import { liqo } from "../register/phases/liqo.ts";
import { offloading } from "../register/phases/offloading.ts";
import { operator } from "../register/phases/operator.ts";
import { outboundPeer } from "../register/phases/outbound-peer.ts";

/**
 * What `nr cluster register` recorded that it created on this machine and in NodeRings:
 * all that `nr cluster reset` removes, and nothing else. A phase counts when its checkpoint
 * is done, or stale (done, then an earlier phase ran again: its work is still there). It is
 * copied into the reset's own state on its first run, so a reset resumed after the archive
 * phase moved the registration's state away still knows what it removes.
 */
export const RecordedInstall = z.strictObject({
  /** The registration's run id, and where its state was. */
  registerRunId: z.string(),
  stateFile: z.string(),
  api: z.string().optional(),
  kubeconfig: z.string(),
  pins: z.record(z.string(), z.string()),
  agent: z
    .strictObject({
      agentId: z.string(),
      name: z.string(),
      clusterId: z.string(),
      /** Whether the registration created it (false, or unknown for an older record: it existed, and is kept). */
      created: z.boolean(),
    })
    .optional(),
  k3s: z.strictObject({ nodeName: z.string(), version: z.string() }).optional(),
  /** Calico's version, and where its manifests were (absent in an older record: the release's for the version). */
  calico: z.strictObject({ version: z.string(), manifests: z.string().optional() }).optional(),
  liqo: z.strictObject({ version: z.string(), clusterId: z.string() }).optional(),
  outbound: z.strictObject({ platformClusterId: z.string() }).optional(),
  /** Whether the reverse peering ran (done, or failed after its liqoctl peer may have run). */
  inbound: z.boolean(),
  offloaded: z.array(z.string()).optional(),
  /**
   * The offloaded namespaces the registration created (absent in an older record, which did
   * not say: then none is deleted). A namespace that existed before it is never among them.
   */
  createdNamespaces: z.array(z.string()).optional(),
  operator: z.strictObject({ release: z.string(), namespace: z.string(), secret: z.string() }).optional(),
});
export type RecordedInstall = z.infer<typeof RecordedInstall>;

/** Reads what the registration's state says nr created (see {@link RecordedInstall}). */
export function recordedInstall(state: RunState, stateFile: string): RecordedInstall {
  const ran = (id: string) => {
    const checkpoint = state.phases[id];
    return checkpoint !== undefined && (checkpoint.state === "done" || checkpoint.state === "stale")
      ? checkpoint.outputs
      : undefined;
  };
  const agentOut = ran(agent.id);
  const k3sOut = ran(k3s.id);
  const calicoOut = ran(calico.id);
  const liqoOut = ran(liqo.id);
  const outboundOut = ran(outboundPeer.id);
  const offloadingOut = ran(offloading.id);
  const operatorOut = ran(operator.id);
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const pins = recorded(RecordedPins, state.meta.pins);
  const secret = text(operatorOut?.secret);
  const [secretNamespace, secretName] = secret?.split("/") ?? [];
  const agentId = text(agentOut?.agentId);
  const agentName = text(agentOut?.name);
  return RecordedInstall.parse({
    registerRunId: state.runId,
    stateFile,
    ...(typeof state.meta.api === "string" ? { api: state.meta.api } : {}),
    kubeconfig: text(state.meta.kubeconfig) ?? "/etc/rancher/k3s/k3s.yaml",
    pins: pins?.versions ?? {},
    ...(agentId === undefined || agentName === undefined
      ? {}
      : {
          agent: {
            agentId,
            name: agentName,
            clusterId: text(agentOut?.clusterId) ?? agentName,
            created: agentOut?.created === true,
          },
        }),
    ...(k3sOut === undefined
      ? {}
      : { k3s: { nodeName: text(k3sOut.nodeName) ?? "", version: text(k3sOut.version) ?? "" } }),
    ...(calicoOut === undefined
      ? {}
      : {
          calico: {
            version: text(calicoOut.version) ?? "",
            ...(text(calicoOut.manifests) === undefined ? {} : { manifests: text(calicoOut.manifests) }),
          },
        }),
    ...(liqoOut === undefined
      ? {}
      : { liqo: { version: text(liqoOut.version) ?? "", clusterId: text(liqoOut.clusterId) ?? "" } }),
    ...(outboundOut === undefined
      ? {}
      : { outbound: { platformClusterId: text(outboundOut.platformClusterId) ?? "" } }),
    inbound: ["done", "stale", "failed"].includes(state.phases[inboundPeering.id]?.state ?? "none"),
    ...(offloadingOut === undefined
      ? {}
      : {
          offloaded: Array.isArray(offloadingOut.namespaces)
            ? offloadingOut.namespaces.filter((name): name is string => typeof name === "string")
            : [],
          ...(Array.isArray(offloadingOut.created)
            ? {
                createdNamespaces: offloadingOut.created.filter((name): name is string => typeof name === "string"),
              }
            : {}),
        }),
    ...(operatorOut === undefined || secretNamespace === undefined || secretName === undefined
      ? {}
      : {
          operator: {
            release: text(operatorOut.release) ?? "",
            namespace: secretNamespace,
            secret: secretName,
          },
        }),
  });
}
