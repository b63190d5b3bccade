import { UserError } from "@nodekit/errors";
import {
  classifyApiError,
  connect,
  type KubeClient,
  type KubeconfigSource,
  kubectlFor,
  kubeError,
  whereOf,
} from "@nodekit/kube";
import {
  AUDIENCE_KEY,
  AUTH_CONFIGMAP_CANDIDATES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  formatRef,
  type ObjectRef,
  SITE_CLUSTER,
} from "./constants.ts";
import { errorCodes } from "./errors.ts";
import { type AuthLog, emit } from "./events.ts";

/** A candidate ConfigMap the kubeconfig's identity may not read (HTTP 403). */
export interface Denial {
  readonly configMap: ObjectRef;
  /** The authenticated user the API server named in its answer, when it did. */
  readonly identity: string | undefined;
  /** The API server's own message. */
  readonly message: string;
}

export type AudienceDiscovery =
  | {
      readonly auth: "on";
      readonly audience: string;
      /** The ConfigMap the audience was read from. */
      readonly configMap: ObjectRef;
      /** Forbidden candidates searched before it. */
      readonly denials: readonly Denial[];
    }
  | { readonly auth: "off" };

export interface DiscoverOptions {
  log?: AuthLog;
  /** Per request to the Kubernetes API; default 30 s. */
  requestTimeoutMs?: number;
}

/**
 * Finds the audience the NVKE controller expects (NV-9): the `audience` key of the first
 * readable of {@link AUTH_CONFIGMAP_CANDIDATES}. A Forbidden candidate is passed over and
 * remembered; a missing one is passed over. Returns `{ auth: "off" }` only when no candidate
 * exists anywhere; when some were Forbidden and none was readable it throws
 * AUTH_CONFIG_FORBIDDEN (Unauthorized) naming the identity, the ConfigMap and the RBAC fix.
 */
export async function discoverAudience(
  kubeconfig: KubeconfigSource,
  options: DiscoverOptions = {},
): Promise<AudienceDiscovery> {
  const client = await connect(kubeconfig, {
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  });
  return discoverWith(client, options.log);
}

export async function discoverWith(client: KubeClient, log: AuthLog | undefined): Promise<AudienceDiscovery> {
  const denials: Denial[] = [];
  for (const candidate of AUTH_CONFIGMAP_CANDIDATES) {
    let data: Record<string, string> | undefined;
    try {
      const configMap = await client.core.readNamespacedConfigMap(candidate, client.requestOptions);
      data = configMap.data;
    } catch (error) {
      const failure = classifyApiError(error);
      if (failure.kind === "forbidden") {
        const denial: Denial = {
          configMap: candidate,
          identity: identityIn(failure.message),
          message: failure.message,
        };
        denials.push(denial);
        emit(log, "configmap-forbidden", `auth ConfigMap ${formatRef(candidate)} forbidden; trying next`, {
          namespace: candidate.namespace,
          name: candidate.name,
          ...(denial.identity === undefined ? {} : { identity: denial.identity }),
        });
        continue;
      }
      if (failure.kind === "not-found") {
        emit(log, "configmap-not-found", `auth ConfigMap ${formatRef(candidate)} not found; trying next`, {
          namespace: candidate.namespace,
          name: candidate.name,
        });
        continue;
      }
      throw kubeError(failure, whereOf(client, `reading ConfigMap ${formatRef(candidate)}`, SITE_CLUSTER), error);
    }
    const audience = data?.[AUDIENCE_KEY]?.trim();
    if (!audience) throw missingAudience(client, candidate, Object.keys(data ?? {}));
    emit(log, "audience-found", `audience ${JSON.stringify(audience)} from auth ConfigMap ${formatRef(candidate)}`, {
      namespace: candidate.namespace,
      name: candidate.name,
      audience,
      denials: denials.length,
    });
    return { auth: "on", audience, configMap: candidate, denials };
  }
  if (denials.length > 0) throw forbidden(client, denials);
  const namespaces = [...new Set(AUTH_CONFIGMAP_CANDIDATES.map((c) => c.namespace))];
  emit(log, "auth-off", `auth off: no auth ConfigMap in ${namespaces.join(" or ")}`, {
    searched: AUTH_CONFIGMAP_CANDIDATES.map(formatRef).join(","),
  });
  return { auth: "off" };
}

/** The user an RBAC denial names: `... is forbidden: User "carol" cannot get resource ...`. */
function identityIn(message: string): string | undefined {
  return /\bUser "([^"]+)"/.exec(message)?.[1];
}

/** `--user=carol`, or `--serviceaccount=ns:name` for a ServiceAccount identity. */
export function subjectFlag(identity: string | undefined): string {
  const serviceAccount = identity === undefined ? undefined : /^system:serviceaccount:([^:]+):([^:]+)$/.exec(identity);
  if (serviceAccount) return `--serviceaccount=${serviceAccount[1]}:${serviceAccount[2]}`;
  return `--user=${identity ?? "<your user>"}`;
}

export function describeIdentity(identity: string | undefined, client: KubeClient): string {
  if (identity !== undefined) return `user ${JSON.stringify(identity)}`;
  return client.userName === undefined
    ? `the identity in ${client.kubeconfigPath === undefined ? "the given KubeConfig" : `kubeconfig ${client.kubeconfigPath}`}`
    : `kubeconfig user ${JSON.stringify(client.userName)}`;
}

function forbidden(client: KubeClient, denials: readonly Denial[]): UserError {
  const [first] = denials;
  if (first === undefined) throw new Error("forbidden() needs at least one denial");
  const who = describeIdentity(first.identity, client);
  const namespace = first.configMap.namespace;
  const names = denials.filter((d) => d.configMap.namespace === namespace).map((d) => d.configMap.name);
  const role = "nvke-auth-config-reader";
  const notFound = AUTH_CONFIGMAP_CANDIDATES.filter(
    (c) => !denials.some((d) => d.configMap.namespace === c.namespace && d.configMap.name === c.name),
  );
  return new UserError(
    errorCodes.AUTH_CONFIG_FORBIDDEN,
    `${who} may not read the NVKE auth ConfigMap ${first.configMap.name} in namespace ${namespace}, and no other candidate is readable; no request was sent to the controller`,
    {
      why: [
        `the audience for the controller's tokens is read from the first readable of ${AUTH_CONFIGMAP_CANDIDATES.map(formatRef).join(", ")}`,
        `Forbidden: ${denials.map((d) => formatRef(d.configMap)).join(", ")}`,
        ...(notFound.length > 0 ? [`not found: ${notFound.map(formatRef).join(", ")}`] : []),
        `the API server said: ${first.message}`,
        'a denial is not "auth off": the ConfigMap may well exist, and the controller would reject a request without a token',
      ].join("; "),
      next: [
        `ask a cluster admin to let ${who} get the auth ConfigMap: kubectl create role ${role} -n ${namespace} --verb=get --resource=configmaps ${names.map((n) => `--resource-name=${n}`).join(" ")}`,
        `and bind it: kubectl create rolebinding ${role} -n ${namespace} --role=${role} ${subjectFlag(first.identity)}`,
        `check with: ${kubectlFor(client.kubeconfigPath)} auth can-i get configmap/${first.configMap.name} -n ${namespace}`,
      ],
    },
  );
}

function missingAudience(client: KubeClient, configMap: ObjectRef, keys: string[]): UserError {
  return new UserError(
    errorCodes.AUTH_CONFIG_INVALID,
    `the NVKE auth ConfigMap ${configMap.name} in namespace ${configMap.namespace} has no ${JSON.stringify(AUDIENCE_KEY)} value`,
    {
      why: `the audience the controller expects in bearer tokens is read from data.${AUDIENCE_KEY} of the first readable auth ConfigMap; this one has ${keys.length === 0 ? "no data keys" : `only ${keys.join(", ")}`}`,
      next: [
        `set it to the audience the controller validates tokens for: ${kubectlFor(client.kubeconfigPath)} -n ${configMap.namespace} patch configmap ${configMap.name} --type merge -p '{"data":{"${AUDIENCE_KEY}":"<audience>"}}'`,
        "or reinstall the controller stack, whose chart writes this ConfigMap",
      ],
    },
  );
}
