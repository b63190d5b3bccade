import type { LookupFunction } from "node:net";
import { type HttpTransport, TransportError, tooLarge } from "./transport.ts";

export interface NodeHttpTransportOptions {
  /**
   * The certificate authorities an `https://` controller's certificate must chain to (PEM).
   * Default: Node's bundled roots plus the system trust store, so a private CA installed on
   * the machine is trusted.
   */
  ca?: string | readonly string[];
  /** Host name resolution (default: the system's, as `dns.lookup`). */
  lookup?: LookupFunction;
}

/**
 * A transport on Node's own http and https modules. They are taken with
 * `process.getBuiltinModule`, not `import "node:http"`: in Node 22 the ESM namespace of
 * node:http reads its lazy fetch getters (`WebSocket`, …) and so loads all of undici, ≈ 40 ms
 * a short-lived process never needs. Keep-alive is off: a CLI makes a few requests and exits.
 */
export function createNodeHttpTransport(options: NodeHttpTransportOptions = {}): HttpTransport {
  let ca: string[] | undefined;
  const trusted = () => {
    if (ca !== undefined) return ca;
    if (options.ca !== undefined) {
      ca = typeof options.ca === "string" ? [options.ca] : [...options.ca];
    } else {
      const tls = process.getBuiltinModule("node:tls");
      ca = [...new Set([...tls.getCACertificates("default"), ...tls.getCACertificates("system")])];
    }
    return ca;
  };
  return {
    send(request) {
      const https = request.url.protocol === "https:";
      const http = process.getBuiltinModule(https ? "node:https" : "node:http") as typeof import("node:https");
      return new Promise((resolve, reject) => {
        if (request.signal.aborted) {
          reject(new TransportError("aborted", "the request was aborted", { cause: request.signal.reason }));
          return;
        }
        const headers: Record<string, string | number> = { ...request.headers };
        if (request.body !== undefined) headers["content-length"] = Buffer.byteLength(request.body);
        const req = http.request(request.url, {
          method: request.method,
          headers,
          agent: false,
          ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
          ...(https ? { ca: trusted() } : {}),
        });
        let settled = false;
        const fail = (error: TransportError) => {
          if (settled) return;
          settled = true;
          request.signal.removeEventListener("abort", onAbort);
          req.destroy();
          reject(error);
        };
        const onAbort = () =>
          fail(new TransportError("aborted", "the request was aborted", { cause: request.signal.reason }));
        request.signal.addEventListener("abort", onAbort, { once: true });
        req.on("error", (error) => fail(new TransportError("network", error.message, { cause: error })));
        req.on("response", (res) => {
          const declared = Number(res.headers["content-length"] ?? Number.NaN);
          if (declared > request.maxBodyBytes) {
            fail(tooLarge(request.maxBodyBytes));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > request.maxBodyBytes) fail(tooLarge(request.maxBodyBytes));
            else chunks.push(chunk);
          });
          res.on("error", (error) => fail(new TransportError("network", error.message, { cause: error })));
          res.on("aborted", () => fail(new TransportError("network", "the connection closed mid-body")));
          res.on("end", () => {
            if (settled) return;
            settled = true;
            request.signal.removeEventListener("abort", onAbort);
            const responseHeaders: Record<string, string> = {};
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
            }
            resolve({
              status: res.statusCode ?? 0,
              headers: responseHeaders,
              body: Buffer.concat(chunks).toString("utf8"),
            });
          });
        });
        req.end(request.body);
      });
    },
  };
}
