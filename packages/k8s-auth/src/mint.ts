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
  CLIENT_SERVICE_ACCOUNT,
  DEFAULT_EXPIRATION_SECONDS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  formatRef,
  MIN_EXPIRATION_SECONDS,
  type ObjectRef,
  SITE_CLUSTER,
} from "./constants.ts";
import { describeIdentity, subjectFlag } from "./discover.ts";
import { errorCodes } from "./errors.ts";

export interface MintOptions {
  /** The audience the token is for: the controller's, from {@link discoverAudience}. */
  audience: string;
  /** Default {@link CLIENT_SERVICE_ACCOUNT} (nke-clients/nke-client). */
  serviceAccount?: ObjectRef;
  /** Requested lifetime; default 3600, at least 600. The API server may shorten it. */
  expirationSeconds?: number;
  /** Per request to the Kubernetes API; default 30 s. */
  requestTimeoutMs?: number;
}

export interface MintedToken {
  /** The bearer token. A secret: never log it. */
  readonly token: string;
  /** When the API server says it expires. */
  readonly expiresAt: Date;
}

/**
 * Mints a ServiceAccount token for `audience` with a TokenRequest
 * (`create` on `serviceaccounts/token`). A 403 throws AUTH_TOKEN_FORBIDDEN (Unauthorized)
 * naming the missing permission and the grant; a missing ServiceAccount throws
 * AUTH_SERVICE_ACCOUNT_NOT_FOUND (NotFound).
 */
export async function mintToken(kubeconfig: KubeconfigSource, options: MintOptions): Promise<MintedToken> {
  checkExpiration(options.expirationSeconds);
  const client = await connect(kubeconfig, {
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  });
  return mintWith(client, options);
}

export function checkExpiration(expirationSeconds: number | undefined): void {
  if (expirationSeconds === undefined) return;
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_EXPIRATION_SECONDS) {
    throw new UserError(
      errorCodes.AUTH_TOKEN_EXPIRATION_INVALID,
      `token lifetime ${expirationSeconds} s is not allowed: it must be a whole number of seconds, at least ${MIN_EXPIRATION_SECONDS}`,
      {
        why: `the Kubernetes API server refuses TokenRequests for less than ${MIN_EXPIRATION_SECONDS} seconds`,
        next: `ask for ${DEFAULT_EXPIRATION_SECONDS} seconds (the default) or more`,
      },
    );
  }
}

export async function mintWith(client: KubeClient, options: MintOptions): Promise<MintedToken> {
  const serviceAccount = options.serviceAccount ?? CLIENT_SERVICE_ACCOUNT;
  const expirationSeconds = options.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  let status: { token?: string; expirationTimestamp?: Date } | undefined;
  try {
    const response = await client.core.createNamespacedServiceAccountToken(
      {
        name: serviceAccount.name,
        namespace: serviceAccount.namespace,
        body: { spec: { audiences: [options.audience], expirationSeconds } },
      },
      client.requestOptions,
    );
    status = response.status;
  } catch (error) {
    const failure = classifyApiError(error);
    if (failure.kind === "forbidden") throw tokenForbidden(client, serviceAccount, failure.message);
    if (failure.kind === "not-found") throw serviceAccountMissing(client, serviceAccount, failure.message);
    throw kubeError(
      failure,
      whereOf(client, `the TokenRequest for ServiceAccount ${formatRef(serviceAccount)}`, SITE_CLUSTER),
      error,
    );
  }
  const token = status?.token;
  const expiresAt = status?.expirationTimestamp;
  if (!token || !(expiresAt instanceof Date) || Number.isNaN(expiresAt.getTime())) {
    throw new UserError(
      errorCodes.AUTH_TOKEN_RESPONSE_INVALID,
      `the site cluster answered the TokenRequest for ${formatRef(serviceAccount)} without a token`,
      {
        why: `its status has ${token ? "a token but no valid expirationTimestamp" : "no token"}`,
        next: `retry; if it persists, check the API server with: ${kubectlFor(client.kubeconfigPath)} get --raw /readyz`,
      },
    );
  }
  return { token, expiresAt };
}

function tokenForbidden(client: KubeClient, serviceAccount: ObjectRef, message: string): UserError {
  const identity = /\bUser "([^"]+)"/.exec(message)?.[1];
  const who = describeIdentity(identity, client);
  const role = `${serviceAccount.name}-token-creator`;
  const { namespace, name } = serviceAccount;
  return new UserError(
    errorCodes.AUTH_TOKEN_FORBIDDEN,
    `${who} may not mint tokens for ServiceAccount ${name} in namespace ${namespace}: it lacks create on serviceaccounts/token`,
    {
      why: `bearer tokens for the controller are minted with a TokenRequest for ${namespace}/${name}; the API server said: ${message}`,
      next: [
        `ask a cluster admin to grant it: kubectl create role ${role} -n ${namespace} --verb=create --resource=serviceaccounts/token --resource-name=${name}`,
        `and bind it: kubectl create rolebinding ${role} -n ${namespace} --role=${role} ${subjectFlag(identity)}`,
        `check with: ${kubectlFor(client.kubeconfigPath)} auth can-i create serviceaccounts/${name} --subresource=token -n ${namespace}`,
      ],
    },
  );
}

function serviceAccountMissing(client: KubeClient, serviceAccount: ObjectRef, message: string): UserError {
  const { namespace, name } = serviceAccount;
  return new UserError(
    errorCodes.AUTH_SERVICE_ACCOUNT_NOT_FOUND,
    `ServiceAccount ${name} in namespace ${namespace} does not exist on the site cluster`,
    {
      why: `controller tokens are minted for ${namespace}/${name}, which the controller stack installs; the API server said: ${message}`,
      next: [
        "install (or re-run the install of) the controller stack on this site",
        `or create it: ${kubectlFor(client.kubeconfigPath)} create serviceaccount ${name} -n ${namespace}`,
      ],
    },
  );
}
