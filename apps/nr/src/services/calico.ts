import coerce from "semver/functions/coerce.js";
import gte from "semver/functions/gte.js";
import type { NetworkPlan } from "./network.ts";

/** Where Calico publishes the tigera operator's manifests for a release. */
export function calicoManifestsBase(version: string): string {
  return `https://raw.githubusercontent.com/projectcalico/calico/${version}/manifests`;
}

/**
 * The CRD manifest's name in a Calico release, by the first release that used it: Calico's
 * install guides apply `operator-crds.yaml` up to 3.31 and `v1_crd_projectcalico_org.yaml`
 * from 3.32 on (tigera/docs calico_versioned_docs/version-3.31 and version-3.32,
 * getting-started/kubernetes/k3s/quickstart.mdx). Newest first.
 */
const CRD_MANIFESTS: ReadonlyArray<{ since: string; name: string }> = [
  { since: "3.32.0", name: "v1_crd_projectcalico_org.yaml" },
  { since: "0.0.0", name: "operator-crds.yaml" },
];

/**
 * The CRDs, then the operator itself (namespace, RBAC, Deployment), as Calico's install
 * guide for `version` applies them. A version that is not one (a hand-edited pin) gets the
 * newest names.
 */
export function calicoManifests(base: string, version: string): { crds: string; operator: string } {
  const root = base.replace(/\/+$/, "");
  const release = coerce(version);
  const crds =
    CRD_MANIFESTS.find((entry) => release === null || gte(release, entry.since))?.name ?? "operator-crds.yaml";
  return { crds: `${root}/${crds}`, operator: `${root}/tigera-operator.yaml` };
}

/**
 * The custom resources the tigera operator installs Calico from: an Installation whose IP
 * pool is the network plan's pod CIDR (VXLAN, as k3s without flannel needs no BGP peers),
 * with Liqo's interfaces excluded from node-address autodetection (Liqo's gateway and
 * tunnel interfaces must never be taken for the node's address), IP forwarding in the
 * containers (k3s's ServiceLB needs it), and the Calico API server.
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
        // k3s's ServiceLB pods forward through the container (klipper-lb); without IP
        // forwarding in Calico's CNI config they crash-loop (k3s-io/klipper-lb#6).
        containerIPForwarding: "Enabled",
      },
    },
  };
  const apiServer = { apiVersion: "operator.tigera.io/v1", kind: "APIServer", metadata: { name: "default" }, spec: {} };
  return `${JSON.stringify({ apiVersion: "v1", kind: "List", items: [installation, apiServer] }, null, 2)}\n`;
}
