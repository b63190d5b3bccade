import {
  ApiextensionsV1Api,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  RbacAuthorizationV1Api,
  type V1PolicyRule,
  type V1ResourceAttributes,
} from "@kubernetes/client-node";
import { keepConnections } from "@nodekit/kube-connections";
import { eventually } from "@nodekit/test-utils";

// Kubernetes helpers for integration tests (`@nodekit/testenv/kube`), kept out of the
// package's main entry so that only tests load @kubernetes/client-node through it.

/** API clients for one kubeconfig (one identity), keeping their connections as nvkectl's and nr's do. */
export function clientsFor(kubeconfigPath: string) {
  const kc = keepConnections(new KubeConfig());
  kc.loadFromFile(kubeconfigPath);
  return {
    core: kc.makeApiClient(CoreV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    authn: kc.makeApiClient(AuthenticationV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
    apiextensions: kc.makeApiClient(ApiextensionsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

/** Runs `call`, taking a failure with this HTTP status (404 on a delete, 409 on a create) as success. */
export async function ignoring(status: number, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if ((error as { code?: unknown }).code !== status) throw error;
  }
}

export interface RoleGrant {
  namespace: string;
  /** The name of both the Role and its RoleBinding. */
  name: string;
  user: string;
  rules: V1PolicyRule[];
}

/** A Role with `rules` in `namespace`, bound to `user`; an earlier grant of that name is replaced. */
export async function grantRole(rbac: RbacAuthorizationV1Api, grant: RoleGrant): Promise<void> {
  const { namespace, name } = grant;
  await revokeRole(rbac, { namespace, name });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: grant.rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: grant.user }],
    },
  });
}

/** Removes a grant made by {@link grantRole}, if it is there. */
export async function revokeRole(
  rbac: RbacAuthorizationV1Api,
  { namespace, name }: { namespace: string; name: string },
): Promise<void> {
  await ignoring(404, () => rbac.deleteNamespacedRoleBinding({ name, namespace }));
  await ignoring(404, () => rbac.deleteNamespacedRole({ name, namespace }));
}

/** Waits until the authorizer's caches agree with the grants just made (a SubjectAccessReview allows `user` this). */
export async function untilAllowed(
  authz: AuthorizationV1Api,
  user: string,
  attributes: V1ResourceAttributes,
  timeoutMs = 15_000,
): Promise<void> {
  await eventually(async () => {
    const review = await authz.createSubjectAccessReview({
      body: { spec: { user, resourceAttributes: attributes } },
    });
    if (!review.status?.allowed) throw new Error(`RBAC never allowed ${user}: ${JSON.stringify(attributes)}`);
  }, timeoutMs);
}
