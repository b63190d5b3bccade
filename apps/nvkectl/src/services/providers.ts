import { UserError } from "@nodekit/errors";
import {
  assertKubeconfig,
  classifyApiError,
  connect,
  type KubeClient,
  kubeconfigFiles,
  kubeError,
  whereOf,
} from "@nodekit/kube";
import { errorCodes } from "../errors.ts";
import type { SiteCluster } from "./kubectl.ts";
import { type ObjectKey, PROVIDERS, type ProviderDefinition } from "./provider-catalogue.ts";
import { quotedList } from "./select.ts";

/** STATE: CONFIGURED, or the first thing a provider lacks, in the order they are checked. */
const PROVIDER_STATES = [
  "NOT-INSTALLED",
  "CRDS-MISSING",
  "CRDS-NOT-ESTABLISHED",
  "NO-CONTROLLER",
  "CONTROLLER-UNAVAILABLE",
  "NO-CREDENTIALS",
  "CONFIGURED",
] as const;
type ProviderState = (typeof PROVIDER_STATES)[number];

/**
 * CREDENTIALS: the state of the provider's own last credential check (HEALTHY, INVALID,
 * EXPIRED, FORBIDDEN, UNREACHABLE, …, as its identity object reports it), UNKNOWN when an
 * identity names the Secret but has not checked it yet, NO-IDENTITY when none names it,
 * UNSUPPORTED when the provider has no credentials to check.
 */
type CredentialsState = string;

/** What was found on the site cluster for one provider. */
export interface ProviderObservation {
  /** Each of the provider's CRDs: missing, or whether it is Established. */
  crds: Record<string, "missing" | "established" | "not-established">;
  controller: { found: false } | { found: true; available: boolean; readyReplicas: number; replicas: number };
  /** Undefined for providers without credentials. */
  secretFound?: boolean;
  /** The identity objects that name the credentials Secret. */
  identities: IdentityObservation[];
}

interface IdentityObservation extends ObjectKey {
  /** status.credentials.state, as written by the provider. */
  state?: string;
  /** status.credentials.lastCheckTime (RFC 3339). */
  lastCheckTime?: string;
  /** status.credentials.message, the provider's own words. */
  message?: string;
}

export interface ProviderStatus {
  name: string;
  description: string;
  state: ProviderState;
  /** What is missing, for STATE other than CONFIGURED; empty when configured. */
  reason: string;
  credentials: CredentialsState;
  /** When the provider last checked its credentials. */
  lastCheckTime?: string;
  /** The identity object the CREDENTIALS come from (`namespace/name`). */
  identity?: string;
  /** The provider's own message about its last check. */
  credentialsMessage?: string;
  controller: string;
  credentialsSecret?: string;
}

const key = (ref: ObjectKey) => `${ref.namespace}/${ref.name}`;

/** STATE and CREDENTIALS of one provider from what was observed. Pure. */
export function assessProvider(definition: ProviderDefinition, observed: ProviderObservation): ProviderStatus {
  const missing = definition.crds.filter((crd) => observed.crds[crd] === "missing" || observed.crds[crd] === undefined);
  const notEstablished = definition.crds.filter((crd) => observed.crds[crd] === "not-established");
  let state: ProviderState;
  let reason = "";
  if (missing.length === definition.crds.length) {
    state = "NOT-INSTALLED";
    reason = `none of its ${definition.crds.length} CRDs exist`;
  } else if (missing.length > 0) {
    state = "CRDS-MISSING";
    reason = `CRD ${missing.join(", ")} not found`;
  } else if (notEstablished.length > 0) {
    state = "CRDS-NOT-ESTABLISHED";
    reason = `CRD ${notEstablished.join(", ")} not Established`;
  } else if (!observed.controller.found) {
    state = "NO-CONTROLLER";
    reason = `Deployment ${key(definition.controller)} not found`;
  } else if (!observed.controller.available) {
    state = "CONTROLLER-UNAVAILABLE";
    reason = `Deployment ${key(definition.controller)} not Available (${observed.controller.readyReplicas}/${observed.controller.replicas} ready)`;
  } else if (definition.credentials !== undefined && observed.secretFound !== true) {
    state = "NO-CREDENTIALS";
    reason = `Secret ${key(definition.credentials.secret)} not found`;
  } else {
    state = "CONFIGURED";
  }

  const status: ProviderStatus = {
    name: definition.name,
    description: definition.description,
    state,
    reason,
    credentials: "UNSUPPORTED",
    controller: key(definition.controller),
  };
  if (definition.credentials === undefined) return status;
  status.credentialsSecret = key(definition.credentials.secret);
  const identity = latestCheck(observed.identities);
  if (identity === undefined) {
    status.credentials = "NO-IDENTITY";
    return status;
  }
  status.identity = key(identity);
  status.credentials = identity.state ? identity.state.toUpperCase() : "UNKNOWN";
  if (identity.lastCheckTime !== undefined) status.lastCheckTime = identity.lastCheckTime;
  if (identity.message !== undefined) status.credentialsMessage = identity.message;
  return status;
}

/** Of several identities naming the same Secret, the one that checked last (then by name). */
function latestCheck(identities: readonly IdentityObservation[]): IdentityObservation | undefined {
  return [...identities].sort((a, b) => {
    const byTime = (Date.parse(b.lastCheckTime ?? "") || 0) - (Date.parse(a.lastCheckTime ?? "") || 0);
    return byTime !== 0 ? byTime : key(a).localeCompare(key(b));
  })[0];
}

// ---------------------------------------------------------------------------------------
// Reading the site cluster (through @kubernetes/client-node, read-only: no kubectl needed)

export interface GetProvidersOptions {
  cluster: SiteCluster;
  providers?: readonly ProviderDefinition[];
}

interface KubeObject {
  metadata?: { name?: string; namespace?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** One read of the site cluster: its answer, or undefined when the object is not there. */
type Read = <T>(doing: string, call: (client: KubeClient) => Promise<T>) => Promise<T | undefined>;

/** Every known provider's STATE and CREDENTIALS, read from the site cluster with its kubeconfig. */
export async function getProviders(options: GetProvidersOptions): Promise<ProviderStatus[]> {
  const providers = options.providers ?? PROVIDERS;
  const { cluster } = options;
  const files = kubeconfigFiles(cluster);
  for (const file of files) await assertKubeconfig(file, cluster.what ?? "the site's kubeconfig");
  const client = await connect(files, {
    requestTimeoutMs: cluster.requestTimeoutMs ?? 30_000,
    context: cluster.context,
  });
  const read: Read = async (doing, call) => {
    try {
      return await call(client);
    } catch (error) {
      const failure = classifyApiError(error);
      if (failure.kind === "not-found") return undefined;
      throw kubeError(failure, whereOf(client, doing, "the site cluster"), error);
    }
  };
  const crdNames = [...new Set(providers.flatMap((p) => p.crds))];
  const crds = await readCrds(read, crdNames);
  return Promise.all(
    providers.map(async (definition) => {
      const crdStates = Object.fromEntries(definition.crds.map((crd) => [crd, crds.get(crd) ?? "missing"] as const));
      const identityResource = definition.credentials?.identity.resource;
      const [controller, secretFound, identities] = await Promise.all([
        readDeployment(read, definition.controller),
        definition.credentials === undefined
          ? Promise.resolve(undefined)
          : secretExists(read, definition.credentials.secret),
        identityResource !== undefined && crds.get(identityResource) === "established" && definition.credentials
          ? readIdentities(read, definition.credentials)
          : Promise.resolve([]),
      ]);
      return assessProvider(definition, {
        crds: crdStates,
        controller,
        ...(secretFound === undefined ? {} : { secretFound }),
        identities,
      });
    }),
  );
}

function condition(object: KubeObject, type: string): string | undefined {
  const conditions = object.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  const found = conditions.find((c: { type?: string }) => c?.type === type) as { status?: string } | undefined;
  return found?.status;
}

async function readCrds(read: Read, names: string[]): Promise<Map<string, "established" | "not-established">> {
  const found = new Map<string, "established" | "not-established">();
  const crds = await Promise.all(
    names.map((name) =>
      read("reading the providers' CRDs", (client) =>
        client.apiextensions.readCustomResourceDefinition({ name }, client.requestOptions),
      ),
    ),
  );
  for (const crd of crds) {
    const name = crd?.metadata?.name;
    if (crd !== undefined && name)
      found.set(
        name,
        condition(crd as unknown as KubeObject, "Established") === "True" ? "established" : "not-established",
      );
  }
  return found;
}

async function readDeployment(read: Read, ref: ObjectKey): Promise<ProviderObservation["controller"]> {
  const deployment = await read(`reading the provider controller Deployment ${key(ref)}`, (client) =>
    client.apps.readNamespacedDeployment({ name: ref.name, namespace: ref.namespace }, client.requestOptions),
  );
  if (deployment === undefined) return { found: false };
  return {
    found: true,
    available: condition(deployment as unknown as KubeObject, "Available") === "True",
    readyReplicas: deployment.status?.readyReplicas ?? 0,
    replicas: deployment.spec?.replicas ?? 1,
  };
}

/**
 * Whether the Secret exists. Its data is never fetched: the API server is asked for the
 * object's metadata only (PartialObjectMetadata, as kubectl's `-o name`), with `get` by name.
 */
async function secretExists(read: Read, ref: ObjectKey): Promise<boolean> {
  const secret = await read(`checking the provider credentials Secret ${key(ref)}`, (client) =>
    client.core.readNamespacedSecret({ name: ref.name, namespace: ref.namespace }, client.metadataOnly),
  );
  return secret?.metadata?.name === ref.name;
}

async function readIdentities(
  read: Read,
  credentials: NonNullable<ProviderDefinition["credentials"]>,
): Promise<IdentityObservation[]> {
  const [group, version] = credentials.identity.apiVersion.split("/") as [string, string];
  const plural = credentials.identity.resource.slice(0, credentials.identity.resource.indexOf("."));
  const secret = credentials.secret;
  const list = (await read(`reading the provider identities (${credentials.identity.resource})`, (client) =>
    client.customObjects.listClusterCustomObject({ group, version, plural }, client.requestOptions),
  )) as { items?: KubeObject[] } | undefined;
  const out: IdentityObservation[] = [];
  for (const object of list?.items ?? []) {
    const namespace = object.metadata?.namespace ?? "";
    const secretRef = object.spec?.secretRef as { name?: string; namespace?: string } | undefined;
    if (secretRef?.name !== secret.name || (secretRef.namespace ?? namespace) !== secret.namespace) continue;
    const credentialsStatus = object.status?.credentials as
      | { state?: unknown; lastCheckTime?: unknown; message?: unknown }
      | undefined;
    const identity: IdentityObservation = { namespace, name: object.metadata?.name ?? "" };
    if (typeof credentialsStatus?.state === "string" && credentialsStatus.state !== "")
      identity.state = credentialsStatus.state;
    if (typeof credentialsStatus?.lastCheckTime === "string") identity.lastCheckTime = credentialsStatus.lastCheckTime;
    if (typeof credentialsStatus?.message === "string") identity.message = credentialsStatus.message;
    out.push(identity);
  }
  return out;
}

/**
 * The definitions of the providers named (every provider without names), in the order
 * given; a name nvkectl does not know is PROVIDER_NOT_FOUND, before anything is read.
 */
export function providersNamed(names: readonly string[]): readonly ProviderDefinition[] {
  if (names.length === 0) return PROVIDERS;
  const unknown = names.filter((name) => !PROVIDERS.some((provider) => provider.name === name));
  if (unknown.length > 0) {
    throw new UserError(
      errorCodes.PROVIDER_NOT_FOUND,
      `${unknown.length === 1 ? "provider" : "providers"} ${quotedList(unknown)} ${unknown.length === 1 ? "is" : "are"} not known to nvkectl`,
      { why: `nvkectl knows the providers ${PROVIDERS.map((provider) => provider.name).join(", ")}` },
    );
  }
  return [...new Set(names)].map((name) => PROVIDERS.find((provider) => provider.name === name) as ProviderDefinition);
}
