import type { StartOutboundPeeringRequest } from "@nodekit/noderings-api";

/** The outbound peering request nr makes for `clusterId`: the platform's Liqo and k3s's default CIDRs. */
export const outboundRequest = (clusterId: string): StartOutboundPeeringRequest => ({
  clusterId,
  liqoVersion: "v1.0.1",
  podCIDR: "10.42.0.0/16",
  serviceCIDR: "10.43.0.0/16",
});
