import { isDeepStrictEqual } from "node:util";
import type { KubeConfig, RequestContext } from "@kubernetes/client-node";

type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>;
type Cluster = Parameters<KubeConfig["createDispatcherOptions"]>[0];
type AgentOptions = Parameters<KubeConfig["createDispatcherOptions"]>[1];
type DispatcherOptions = ReturnType<KubeConfig["createDispatcherOptions"]>;

/**
 * What @kubernetes/client-node 2's KubeConfig calls, for every request (an API client's, a
 * Watch's, a Log's), once it has the request's credentials: it makes the request's undici
 * dispatcher from the TLS options they give (`createDispatcherOptions`), a new Agent each
 * time. Private in its types; {@link keepConnections} replaces it on one instance.
 */
interface MakesDispatchers {
  createDispatcher(cluster: Cluster, agentOptions: AgentOptions): Dispatcher | undefined;
}

/** Marks a KubeConfig whose dispatchers are already kept. */
const KEPT = Symbol("@nodekit/kube keeps this KubeConfig's connections");

export interface KeepConnectionsOptions {
  /**
   * How long a dispatcher made for credentials that have since changed is kept before it is
   * closed (default 60 s): a request given it just before the change, or waiting to be sent
   * again after a 429, is still sent on it. Its idle connections close sooner, after undici's
   * keep-alive time; the timer holds no process open.
   */
  closeReplacedAfterMs?: number;
}

/**
 * Makes the requests of `kc` keep their connections, and returns it. @kubernetes/client-node
 * 2 gives every request a new undici Agent: each opens a TLS connection of its own (a
 * handshake on both sides, the client key parsed again), which a wait that polls the API pays
 * on every poll. From now on, every request of one cluster and user is sent through one
 * dispatcher, while the TLS options its credentials give (CA, client certificate and key,
 * server name, proxy) stay the same. When they change (an exec plugin's new client
 * certificate, a certificate file replaced) the next request gets a new dispatcher, and so a
 * new connection with the new certificate; the old dispatcher is closed a minute later,
 * gracefully. A bearer token is a header: it changes nothing here.
 *
 * The idle connections kept hold no process open (undici unrefs an idle socket). What is
 * replaced is one method of this instance (client-node's `createDispatcher`); a client-node
 * without it gets no pooling, and packages/kube's connections test fails.
 */
export function keepConnections<T extends KubeConfig>(kc: T, options: KeepConnectionsOptions = {}): T {
  const target = kc as unknown as MakesDispatchers & { [KEPT]?: true };
  const make = target.createDispatcher;
  if (target[KEPT] === true || typeof make !== "function") return kc;
  const closeAfterMs = options.closeReplacedAfterMs ?? 60_000;
  /** Per cluster and user name: the TLS options of the dispatcher made last, and that dispatcher. */
  const kept = new Map<string, { options: DispatcherOptions; dispatcher: Dispatcher | undefined }>();
  Object.defineProperties(target, {
    [KEPT]: { value: true },
    createDispatcher: {
      value(this: KubeConfig, cluster: Cluster, agentOptions: AgentOptions) {
        const tls = this.createDispatcherOptions(cluster, agentOptions);
        const key = JSON.stringify([cluster?.name ?? "", this.getCurrentUser()?.name ?? ""]);
        const last = kept.get(key);
        // Buffers (a CA or key file, read again for each request) compare by their bytes.
        if (last !== undefined && isDeepStrictEqual(last.options, tls)) return last.dispatcher;
        const dispatcher = make.call(this, cluster, agentOptions);
        kept.set(key, { options: tls, dispatcher });
        if (last?.dispatcher !== undefined) closeLater(last.dispatcher, closeAfterMs);
        return dispatcher;
      },
    },
  });
  return kc;
}

/** Closes a replaced dispatcher after `ms` (see {@link KeepConnectionsOptions}), on a timer that holds no process open. */
function closeLater(dispatcher: Dispatcher, ms: number): void {
  // close() lets the requests sent on it finish: a watch keeps its connection until it ends.
  setTimeout(() => void dispatcher.close().catch(() => undefined), ms).unref();
}
