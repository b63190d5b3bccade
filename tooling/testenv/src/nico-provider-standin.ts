import { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from "@kubernetes/client-node";
import { keepConnections } from "@nodekit/kube-connections";
import { reconcileOnChange } from "./reconcile-on-change.ts";

// A test-only stand-in for the one thing the NICo Cluster API provider's controller does that
// `nvkectl get providers` reads: its credential check. No pod runs in the test tier or the
// sandbox (their nico components are a Deployment that runs nothing, see capi-repository.ts),
// so nothing else would ever write it. What it models is docs/providers.md's contract for the
// provider: for each NicoIdentity, read the Secret its spec.secretRef names (the namespace
// defaults to the identity's own), authenticate with the Secret's `apiKey`, and record the
// result in status.credentials {state, lastCheckTime, message} through the status
// subresource; check again when the identity or the Secret changes, and every `recheckMs`.
// Like the provider's informers, it watches the identities and the Secrets and reconciles on
// each change (reconcile-on-change.ts), with a resync every `recheckMs`: it lists nothing on a
// timer (it listed twice a second before, in every sandbox and install test).
// The NICo API is not reachable here, so `check` answers what NICo would (the sandbox accepts
// the one key it documents). The unfriendly parts first: a missing Secret, a Secret without
// an `apiKey` and a key NICo refuses each record INVALID with the reason, never HEALTHY.
// It stands in for no other part of the provider (no machines, no clusters).

const GROUP = "infrastructure.cluster.x-k8s.io";
const VERSION = "v1beta1";
const PLURAL = "nicoidentities";
/** What the provider's informers follow: its identities, and the Secrets they name. */
const WATCHED = [`/apis/${GROUP}/${VERSION}/${PLURAL}`, "/api/v1/secrets"];

/** What NICo answers for an API key: `HEALTHY`, or a failure state (INVALID, EXPIRED, FORBIDDEN, …), in the provider's words. */
export interface CredentialVerdict {
  state: string;
  message: string;
}

export interface NicoProviderStandInOptions {
  /** NICo's answer for a key. */
  check: (apiKey: string) => CredentialVerdict;
  /** How soon a failed pass, or a watch that could not start or broke, is tried again (default 300 ms). */
  retryMs?: number;
  /** How often an unchanged identity is checked again (default 5 minutes, as a provider's resync). */
  recheckMs?: number;
  now?: () => Date;
}

export interface NicoProviderStandIn {
  stop(): Promise<void>;
  /** Runs one pass now. */
  reconcile(): Promise<void>;
}

interface Identity {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; generation?: number; resourceVersion?: string };
  spec?: { secretRef?: { name?: string; namespace?: string } };
  status?: Record<string, unknown>;
}

const codeOf = (error: unknown) => (error as { code?: number }).code;

export function startNicoProviderStandIn(
  kubeconfigPath: string,
  options: NicoProviderStandInOptions,
): NicoProviderStandIn {
  // One connection per cluster, not a TLS handshake per request (what nvkectl's clients do too).
  const kc = keepConnections(new KubeConfig());
  kc.loadFromFile(kubeconfigPath);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const now = options.now ?? (() => new Date());
  const recheckMs = options.recheckMs ?? 5 * 60_000;
  /** namespace/name → what was checked (identity generation and Secret resourceVersion) and when. */
  const checked = new Map<string, { basis: string; at: number }>();

  async function verdict(identity: Identity): Promise<{ verdict: CredentialVerdict; secretVersion: string }> {
    const namespace = identity.spec?.secretRef?.namespace ?? identity.metadata?.namespace ?? "";
    const name = identity.spec?.secretRef?.name;
    if (name === undefined || name === "") {
      return { verdict: { state: "INVALID", message: "spec.secretRef names no Secret" }, secretVersion: "" };
    }
    let secret: Awaited<ReturnType<typeof core.readNamespacedSecret>>;
    try {
      secret = await core.readNamespacedSecret({ name, namespace });
    } catch (error) {
      if (codeOf(error) !== 404) throw error;
      return { verdict: { state: "INVALID", message: `Secret ${namespace}/${name} not found` }, secretVersion: "" };
    }
    const encoded = secret.data?.apiKey;
    const apiKey = encoded === undefined ? "" : Buffer.from(encoded, "base64").toString("utf8");
    const secretVersion = secret.metadata?.resourceVersion ?? "";
    if (apiKey === "") {
      return { verdict: { state: "INVALID", message: `Secret ${namespace}/${name} has no apiKey` }, secretVersion };
    }
    return { verdict: options.check(apiKey), secretVersion };
  }

  async function reconcileIdentity(identity: Identity): Promise<void> {
    const { name, namespace } = identity.metadata ?? {};
    if (name === undefined || namespace === undefined) return;
    const key = `${namespace}/${name}`;
    const { verdict: result, secretVersion } = await verdict(identity);
    const basis = `${identity.metadata?.generation ?? 0}/${secretVersion}/${result.state}`;
    const last = checked.get(key);
    const time = now();
    if (last !== undefined && last.basis === basis && time.getTime() - last.at < recheckMs) return;
    await custom
      .replaceNamespacedCustomObjectStatus({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: PLURAL,
        name,
        body: {
          ...identity,
          status: {
            ...identity.status,
            credentials: {
              state: result.state,
              // RFC 3339 without fractions, as Kubernetes' metav1.Time serialises.
              lastCheckTime: `${time.toISOString().slice(0, 19)}Z`,
              message: result.message,
            },
          },
        },
      })
      .then(
        () => checked.set(key, { basis, at: time.getTime() }),
        (error: unknown) => {
          // Changed or deleted meanwhile: the next pass sees the new object.
          if (codeOf(error) !== 409 && codeOf(error) !== 404) throw error;
        },
      );
  }

  const reconcile = async () => {
    let identities: Identity[];
    try {
      const list = (await custom.listCustomObjectForAllNamespaces({
        group: GROUP,
        version: VERSION,
        resourcePlural: PLURAL,
      })) as { items?: Identity[] };
      identities = list.items ?? [];
    } catch (error) {
      // The provider is not installed (yet): its CRD does not exist.
      if (codeOf(error) === 404) return true;
      throw error;
    }
    await Promise.all(identities.map(reconcileIdentity));
    return true;
  };

  return reconcileOnChange({
    watch: new Watch(kc),
    paths: WATCHED,
    reconcile,
    resyncMs: recheckMs,
    ...(options.retryMs === undefined ? {} : { retryMs: options.retryMs }),
  });
}
