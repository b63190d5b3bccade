import { KubeConfig, type RequestContext } from "@kubernetes/client-node";

type Dispatcher = NonNullable<ReturnType<RequestContext["getDispatcher"]>>;

/**
 * A KubeConfig whose API clients keep their connections: @kubernetes/client-node 2 gives every
 * request a new undici Agent, so each request opened a TLS connection of its own (a handshake
 * on both sides, the client key parsed again) — most of what the stand-ins' loops cost the
 * sandbox, and its kube-apiservers, every half second. This one hands every request of a
 * cluster and user the first Agent made for them; the others are never used (no socket).
 */
export class PooledKubeConfig extends KubeConfig {
  readonly #dispatchers = new Map<string, Dispatcher>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const made = context.getDispatcher();
    if (made === undefined) return;
    const key = JSON.stringify([this.getCurrentCluster()?.name ?? "", this.getCurrentUser()?.name ?? ""]);
    const kept = this.#dispatchers.get(key) ?? made;
    this.#dispatchers.set(key, kept);
    context.setDispatcher(kept);
  }
}
