import type { NetworkPlan } from "./network.ts";

/** Where Calico publishes the tigera operator's manifests for a release. */
export function calicoManifestsBase(version: string): string {
  return `https://raw.githubusercontent.com/projectcalico/calico/${version}/manifests`;
}

/** The operator's CRDs, then the operator itself (namespace, RBAC, Deployment), as Calico's install guide applies them. */
export function calicoManifests(base: string): { crds: string; operator: string } {
  const root = base.replace(/\/+$/, "");
  return { crds: `${root}/operator-crds.yaml`, operator: `${root}/tigera-operator.yaml` };
}

/**
 * The custom resources the tigera operator installs Calico from: an Installation whose IP
 * pool is the network plan's pod CIDR (VXLAN, as k3s without flannel needs no BGP peers),
 * with Liqo's interfaces excluded from node-address autodetection (Liqo's gateway and
 * tunnel interfaces must never be taken for the node's address), and the Calico API server.
 */
export function calicoResources(network: NetworkPlan): string {
  const installation = {
    apiVersion: "operator.tigera.io/v1",
    kind: "Installation",
    metadata: { name: "default" },
    spec: {
      calicoNetwork: {
        ipPools: [
          {
            name: "default-ipv4-ippool",
            cidr: network.podCidr,
            blockSize: 26,
            encapsulation: "VXLANCrossSubnet",
            natOutgoing: "Enabled",
            nodeSelector: "all()",
          },
        ],
        nodeAddressAutodetectionV4: { skipInterface: "liqo.*" },
      },
    },
  };
  const apiServer = { apiVersion: "operator.tigera.io/v1", kind: "APIServer", metadata: { name: "default" }, spec: {} };
  return `${JSON.stringify({ apiVersion: "v1", kind: "List", items: [installation, apiServer] }, null, 2)}\n`;
}
