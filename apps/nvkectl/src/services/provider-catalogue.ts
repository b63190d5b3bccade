/** A namespaced object, by namespace and name. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/**
 * An infrastructure provider as nvkectl checks it (NV-10). Everything a provider is known
 * by is data here; `get providers` reads these objects and changes none of them.
 */
export interface ProviderDefinition {
  /** As in a CreateClusterRequest's `provider` field. */
  name: string;
  description: string;
  /** CustomResourceDefinition names (`<plural>.<group>`); all must be Established. */
  crds: readonly string[];
  /** The controller Deployment; it must be Available. */
  controller: ObjectKey;
  /**
   * The Secret holding the provider's credentials for its backend, and the identity object
   * that names it and records the provider's last credential check. Absent for providers
   * that need no credentials (CAPD), whose CREDENTIALS read UNSUPPORTED.
   */
  credentials?: {
    secret: ObjectKey;
    identity: {
      kind: string;
      /** `<group>/<version>` of the identity object (what the install creates). */
      apiVersion: string;
      /** `<plural>.<group>`, the resource kubectl lists (in every namespace). */
      resource: string;
    };
  };
}

const INFRA_GROUP = "infrastructure.cluster.x-k8s.io";

/** The providers nvkectl knows, in the order `get providers` lists them. */
export const PROVIDERS: readonly ProviderDefinition[] = [
  {
    name: "nico",
    description: "NICo: machines from NVIDIA Infrastructure Controller",
    crds: [
      `nicoclusters.${INFRA_GROUP}`,
      `nicomachines.${INFRA_GROUP}`,
      `nicomachinetemplates.${INFRA_GROUP}`,
      `nicoidentities.${INFRA_GROUP}`,
    ],
    controller: { namespace: "nico-system", name: "nico-controller-manager" },
    credentials: {
      secret: { namespace: "nico-system", name: "nico-credentials" },
      identity: {
        kind: "NicoIdentity",
        apiVersion: `${INFRA_GROUP}/v1beta1`,
        resource: `nicoidentities.${INFRA_GROUP}`,
      },
    },
  },
  {
    name: "capd",
    description: "Docker (CAPD): machines as containers on the site's hosts, for labs and tests",
    crds: [
      `dockerclusters.${INFRA_GROUP}`,
      `dockerclustertemplates.${INFRA_GROUP}`,
      `dockermachines.${INFRA_GROUP}`,
      `dockermachinetemplates.${INFRA_GROUP}`,
    ],
    controller: { namespace: "capd-system", name: "capd-controller-manager" },
  },
];
