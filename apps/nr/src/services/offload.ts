import { UserError } from "@nodekit/errors";
import { errorCodes } from "../errors.ts";

/**
 * Namespaces never offloaded, whatever NodeRings allows: Kubernetes' and k3s's own, Calico's
 * and Liqo's (`liqo-` is Liqo's prefix: its tenant and storage namespaces). Offloading one
 * would hand NodeRings copies of what runs the agent itself.
 */
const SYSTEM_NAMESPACES = [
  "default",
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "calico-system",
  "calico-apiserver",
  "tigera-operator",
  "liqo",
];
const SYSTEM_PREFIXES = ["kube-", "liqo-", "calico-", "tigera-"];

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A Secret nr creates in this cluster (the Proxmox credentials): its namespace must never be offloaded. */
export interface NrSecret {
  namespace: string;
  name: string;
  /** What it holds, for the message ("the Proxmox credentials"). */
  holds: string;
}

/**
 * Refuses, before any phase runs, an `--offload-namespace` that is not a namespace name
 * (OFFLOAD_NAMESPACE_INVALID) or that Liqo must never reflect to NodeRings
 * (OFFLOAD_NAMESPACE_UNSAFE): a namespace holding a Secret nr creates, or a system one.
 * Liqo reflects the Secrets of an offloaded namespace "verbatim into remote clusters"
 * (liqotech/liqo@v1.0.1 docs/usage/reflection.md): the Proxmox token would reach NodeRings.
 */
export function checkOffloadNamespaces(names: readonly string[], secrets: readonly NrSecret[]): void {
  const invalid = names.filter((name) => name.length > 63 || !DNS_LABEL.test(name));
  if (invalid.length > 0) {
    throw new UserError(
      errorCodes.OFFLOAD_NAMESPACE_INVALID,
      `--offload-namespace ${invalid.map((name) => JSON.stringify(name)).join(", ")} is not a namespace name; nothing was done`,
      { next: "name each as a Kubernetes namespace: lower-case letters, digits and '-', at most 63 characters" },
    );
  }
  const reasons = names.flatMap((name) => {
    const secret = secrets.find((entry) => entry.namespace === name);
    if (secret !== undefined) return [`${name} holds the Secret ${secret.name} with ${secret.holds}, which nr creates`];
    if (SYSTEM_NAMESPACES.includes(name) || SYSTEM_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      return [`${name} is a system namespace (Kubernetes', Calico's or Liqo's)`];
    }
    return [];
  });
  if (reasons.length > 0) {
    throw new UserError(
      errorCodes.OFFLOAD_NAMESPACE_UNSAFE,
      `${reasons.join("; ")}: it is never offloaded; nothing was done`,
      {
        why: "Liqo reflects the Secrets of an offloaded namespace, verbatim, into NodeRings' cluster",
        next: "leave it out of --offload-namespace; offload only namespaces of workloads meant to run on NodeRings",
        facts: {
          namespaces: names.filter((name) => reasons.some((reason) => reason.startsWith(`${name} `))).join(","),
        },
      },
    );
  }
}
