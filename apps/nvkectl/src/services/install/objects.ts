import type { DeployPath } from "@nodekit/deploy-path";
import { manifestObjects, prunable } from "../install-prune.ts";
import type { OwnedObject } from "../install-record.ts";
import { type ObjectKey, PROVIDERS } from "../provider-catalogue.ts";
import { type InstallContext, NICO_CREDENTIALS_SECRET, NICO_IDENTITY_NAME } from "./context.ts";
import { controllerNamespace } from "./documents.ts";

/** Namespaces every cluster has: never recorded as the install's, never deleted by the uninstall. */
const SYSTEM_NAMESPACES = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);

/**
 * The namespaces the install creates (the controller's, each item's, the manifests' Namespace
 * objects) and the manifests' CRDs: what pruning never deletes, and the uninstall does.
 */
export function createdNamespacesAndCrds(documents: Pick<InstallContext, "stack" | "deployPath">) {
  const objects = manifestObjects(documents.deployPath);
  const namespaces = new Set([
    controllerNamespace(documents),
    ...documents.deployPath.items.flatMap((item) => (item.namespace === undefined ? [] : [item.namespace])),
    ...objects.filter((o) => o.kind === "Namespace").map((o) => o.name),
  ]);
  return {
    namespaces: [...namespaces].filter((n) => !SYSTEM_NAMESPACES.has(n)),
    crds: objects.filter((o) => o.kind === "CustomResourceDefinition").map((o) => o.name),
  };
}

/** What renderOwnObjects needs: the documents alone (the inventory is computed before the cluster is observed). */
export type OwnInputs = Pick<InstallContext, "stack" | "deployPath" | "nicoApiKey">;

/**
 * The objects the install applies itself, outside the deploy path: the lab StorageClass, the
 * NICo credentials (the controller's namespace and Secret, and the NICo provider's Secret and
 * NicoIdentity when the deploy path installs that provider), and the client-networks
 * NetworkPolicy (none without client networks).
 */
export function renderOwnObjects(context: OwnInputs) {
  const { stack } = context;
  const namespace = controllerNamespace(context);
  const nico = nicoProviderCredentials(context.deployPath);
  const apiKeySecret = (ref: ObjectKey) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: ref.name, namespace: ref.namespace },
    type: "Opaque",
    stringData: { apiKey: context.nicoApiKey },
  });
  const storageClass = {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name: stack.storageClass.name,
      annotations: { "storageclass.kubernetes.io/is-default-class": String(stack.storageClass.default) },
    },
    provisioner: stack.storageClass.provisioner,
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
  };
  const credentials = [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    apiKeySecret({ namespace, name: NICO_CREDENTIALS_SECRET }),
    ...(nico === undefined
      ? []
      : [
          apiKeySecret(nico.secret),
          {
            apiVersion: nico.identity.apiVersion,
            kind: nico.identity.kind,
            metadata: { name: NICO_IDENTITY_NAME, namespace: nico.secret.namespace },
            spec: { secretRef: { name: nico.secret.name, namespace: nico.secret.namespace } },
          },
        ]),
  ];
  const policy =
    stack.clientNetworks.length === 0
      ? undefined
      : {
          apiVersion: "networking.k8s.io/v1",
          kind: "NetworkPolicy",
          metadata: { name: "nvke-controller-api-clients", namespace },
          spec: {
            podSelector: { matchLabels: stack.controllerApi.podSelector },
            policyTypes: ["Ingress"],
            ingress: [
              {
                from: stack.clientNetworks.map((cidr) => ({ ipBlock: { cidr } })),
                ports: [{ protocol: "TCP", port: stack.controllerApi.port }],
              },
            ],
          },
        };
  return { storageClass, credentials, policy };
}

/** Every object the install applies itself (its own and the deploy path's manifests), as its inventory records them. */
export function inventoryOf(context: OwnInputs): OwnedObject[] {
  const own = renderOwnObjects(context);
  const entry =
    (item: string) =>
    (object: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }) => ({
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.metadata.name,
      item,
      ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }),
    });
  return prunable([
    entry("storage-class")(own.storageClass),
    ...own.credentials.map(entry("nico-credentials")),
    ...manifestObjects(context.deployPath),
    ...(own.policy === undefined ? [] : [entry("client-networks")(own.policy)]),
  ]);
}

/**
 * The NICo provider's credentials Secret and identity kind, as `get providers` reads them
 * (the provider catalogue, docs/providers.md), when the deploy path installs the NICo
 * infrastructure provider; undefined otherwise.
 */
export function nicoProviderCredentials(deployPath: DeployPath) {
  const installs = deployPath.clusterAPI?.infrastructure.some((p) => p.name === "nico") ?? false;
  const credentials = PROVIDERS.find((p) => p.name === "nico")?.credentials;
  return installs ? credentials : undefined;
}
