import { Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import type { LookupFunction } from "node:net";

export interface TransportOptions {
  /**
   * The certificate authorities an `https://` server's certificate must chain to (PEM): these
   * only, when given. Default: Node's bundled roots plus the system trust store, so a private
   * CA installed on the machine is trusted.
   */
  ca?: string | readonly string[] | undefined;
  /** Host name resolution (default: the system's, as `dns.lookup`). Tests resolve to loopback with it. */
  lookup?: LookupFunction | undefined;
  /**
   * Keep connections open between requests (default false: a short-lived CLI makes a few
   * requests and exits). A client that makes hundreds (a registry's existence checks) keeps them.
   * Idle connections never hold the process open.
   */
  keepAlive?: boolean | undefined;
}

/**
 * The one transport under `request()`: Node's own http and https modules, with their
 * connection pools. Chosen by measurement over undici's `request()`, Node's fetch and ky
 * (packages/http/README.md has the figures): a fresh process sends its first request 60–110 ms
 * of CPU sooner, and every request after that costs less. node:https (and so node:tls) loads
 * only when an `https://` URL is first asked for.
 */
export interface Transport {
  /** The connection pool for this URL's scheme. */
  agentFor(url: URL): Promise<HttpAgent | HttpsAgent>;
  /** Closes every pooled connection. */
  close(): void;
}

export function createTransport(options: TransportOptions = {}): Transport {
  const keepAlive = options.keepAlive ?? false;
  const lookup = options.lookup === undefined ? {} : { lookup: options.lookup };
  let http: HttpAgent | undefined;
  let https: Promise<HttpsAgent> | undefined;
  const trusted = async (): Promise<string[]> => {
    if (options.ca !== undefined) return typeof options.ca === "string" ? [options.ca] : [...options.ca];
    const { getCACertificates } = await import("node:tls");
    return [...new Set([...getCACertificates("default"), ...getCACertificates("system")])];
  };
  return {
    async agentFor(url) {
      if (url.protocol === "http:") {
        http ??= new HttpAgent({ keepAlive, ...lookup });
        return http;
      }
      https ??= Promise.all([import("node:https"), trusted()]).then(
        ([{ Agent }, ca]) => new Agent({ keepAlive, ca, ...lookup }),
      );
      return https;
    },
    close() {
      http?.destroy();
      void https?.then((agent) => agent.destroy());
    },
  };
}
