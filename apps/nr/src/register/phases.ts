import type { RegisterPhase } from "./context.ts";
import { agent } from "./phases/agent.ts";
import { calico } from "./phases/calico.ts";
import { inboundPeering } from "./phases/inbound-peering.ts";
import { k3s } from "./phases/k3s.ts";
import { liqo } from "./phases/liqo.ts";
import { offloading } from "./phases/offloading.ts";
import { operator } from "./phases/operator.ts";
import { outboundPeer } from "./phases/outbound-peer.ts";
import { prechecks } from "./phases/prechecks.ts";
import { verify } from "./phases/verify.ts";

/**
 * The ten phases of `nr cluster register`, in order (NR-1), one file each in `phases/`:
 * this list drives the run, the dry run, help, validation and status.
 */
export const REGISTER_PHASES: readonly RegisterPhase<unknown>[] = [
  agent,
  prechecks,
  k3s,
  calico,
  liqo,
  outboundPeer,
  offloading,
  inboundPeering,
  operator,
  verify,
];
