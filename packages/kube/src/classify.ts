/**
 * One vocabulary for how a call to a Kubernetes cluster went wrong, read from kubectl's,
 * helm's or clusterctl's stderr or from the client library's errors. Classification keys
 * on the structured parts of those messages — kubectl's `Error from server (Reason):`, an
 * HTTP status, a transport error code — never on loose words such as "not found" anywhere
 * in the text (a missing context says "not found" too, and is no missing object).
 */

import { classifyTransportError } from "@nodekit/http";

export type KubeFailureKind =
  /** The object asked for does not exist (`Error from server (NotFound)`, 404 for an object). */
  | "not-found"
  /** The resource type is not served (no such CRD, no such API group). */
  | "resource-type-unknown"
  | "forbidden"
  | "unauthorized"
  /** Connection refused, DNS, TLS, client-side timeout. */
  | "unreachable"
  /** 5xx, 429, a server-side timeout. */
  | "unavailable"
  /** Any other 4xx answer (Invalid, BadRequest, Conflict, AlreadyExists, …). */
  | "rejected"
  /** The kubeconfig cannot be used (parse error, missing context/cluster/user, no current context). */
  | "config-invalid"
  /** The kubeconfig's exec credential plugin is not installed. */
  | "credential-plugin-missing"
  /** helm (or clusterctl) was refused by an OCI registry: no credentials for it, or wrong ones (401/403). */
  | "registry-unauthorized"
  | "failed";

export interface KubeFailure {
  kind: KubeFailureKind;
  /** The tool's own message for people (kubectl's last line), or the API's Status message. */
  message: string;
  /** The Status reason (NotFound, Forbidden, AlreadyExists, …) when the server sent one. */
  reason?: string;
  /** HTTP status, when the API server answered (client library only). */
  status?: number;
  /** For unreachable: whether TLS verification is what failed. */
  tls?: boolean;
  /** For credential-plugin-missing: the plugin's executable. */
  plugin?: string;
}

/** klog lines (`E1130 23:04:10.055016 …`) are the tools' internals; their message for people comes last. */
function messageLines(stderr: string): string[] {
  return stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^[IWEF]\d{4} \d{2}:\d{2}:\d{2}/.test(line));
}

const UNAVAILABLE_REASONS = new Set([
  "ServiceUnavailable",
  "InternalError",
  "TooManyRequests",
  "Timeout",
  "ServerTimeout",
]);
const TLS = /x509:|tls: |TLS handshake|certificate (is not|has expired|signed by unknown)/i;
const TRANSPORT =
  /Unable to connect to the server|connection to the server .* was refused|connect: connection refused|dial tcp|no such host|i\/o timeout|context deadline exceeded|Client\.Timeout|net\/http: |connection reset by peer|network is unreachable|EOF$/i;
const CONFIG =
  /error loading config file|invalid configuration|context "[^"]*" does not exist|no context exists with the name|context was not found for specified context|cluster "[^"]*" does not exist|cannot unmarshal|yaml: line \d+|current-context is not set|connection to the server localhost:8080 was refused/i;
const PLUGIN =
  /exec: executable ([^\s:]+) not found|exec plugin: .*"([^"]+)": executable file not found|getting credentials: exec: .*?([^\s/"]+)": executable file not found/;

/**
 * An OCI registry's refusal as helm reports it (through oras-go): no credential for the
 * registry, or a 401/403 answer from it or its token endpoint. The status comes from the
 * registry, not the API server (whose 401 helm reports as kubectl does).
 */
const REGISTRY_AUTH =
  /basic credential not found|response status code 40[13]: |failed to fetch (?:anonymous|oauth) token|unexpected status(?: code)? from (?:HEAD|GET) request to \S+: 40[13] |pull access denied/i;

/** kubectl's (or helm's, clusterctl's) stderr of a failed call, classified. */
export function classifyToolStderr(stderr: string): KubeFailure {
  const lines = messageLines(stderr);
  const text = lines.join("\n");
  const message = (lines.at(-1) ?? stderr.trim()) || "the command failed without a message";

  const plugin = PLUGIN.exec(text);
  if (plugin) {
    const name = plugin[1] ?? plugin[2] ?? plugin[3];
    return { kind: "credential-plugin-missing", message, ...(name === undefined ? {} : { plugin: name }) };
  }
  if (REGISTRY_AUTH.test(text)) return { kind: "registry-unauthorized", message };
  // kubectl: `Error from server (NotFound): secrets "x" not found`; helm and clusterctl wrap
  // the same Status text after their own prefix.
  const server = /Error from server \(([A-Za-z]+)\)(?: \([^)]*\))?: (.*)$/m.exec(text);
  if (server) {
    const reason = server[1] ?? "";
    const said = `${server[2] ?? ""}`.trim() || message;
    if (reason === "NotFound") {
      const kind = /the server could not find the requested resource/.test(said)
        ? "resource-type-unknown"
        : "not-found";
      return { kind, message: said, reason };
    }
    if (reason === "Forbidden") return { kind: "forbidden", message: said, reason };
    if (reason === "Unauthorized") return { kind: "unauthorized", message: said, reason };
    if (UNAVAILABLE_REASONS.has(reason)) return { kind: "unavailable", message: said, reason };
    return { kind: "rejected", message: said, reason };
  }
  if (/the server doesn't have a resource type|no matches for kind|could not find the requested resource/.test(text)) {
    return { kind: "resource-type-unknown", message };
  }
  if (/must be logged in to the server|\(Unauthorized\)|: Unauthorized$/m.test(text)) {
    return { kind: "unauthorized", message };
  }
  if (/\bis forbidden: User "|\(Forbidden\)/.test(text)) return { kind: "forbidden", message };
  // "The connection to the server localhost:8080 was refused - did you specify the right host
  // or port?" is what kubectl says for a kubeconfig with no usable current context.
  if (CONFIG.test(text)) return { kind: "config-invalid", message };
  if (TLS.test(text)) return { kind: "unreachable", message, tls: true };
  if (TRANSPORT.test(text)) return { kind: "unreachable", message };
  return { kind: "failed", message };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/**
 * An error from @kubernetes/client-node, classified: an ApiException (`code` = HTTP status,
 * `body` = the Status JSON) or an undici transport error (a `cause` chain with a code).
 * `object` says whether the call named one object (then a 404 is `not-found`; for a list
 * or a discovery call it is `resource-type-unknown`).
 */
export function classifyApiError(error: unknown, options: { object?: boolean } = {}): KubeFailure {
  if (isRecord(error) && typeof error.code === "number" && "body" in error) {
    const status = error.code;
    const body = parseStatus(error.body);
    const message = body.message ?? `HTTP ${status}`;
    const reason = body.reason;
    const base = { message, status, ...(reason === undefined ? {} : { reason }) };
    if (status === 401) return { kind: "unauthorized", ...base };
    if (status === 403) return { kind: "forbidden", ...base };
    if (status === 404) return { kind: options.object === false ? "resource-type-unknown" : "not-found", ...base };
    if (status === 429 || status >= 500) return { kind: "unavailable", ...base };
    return { kind: "rejected", ...base };
  }
  const chain: unknown[] = [];
  for (let current: unknown = error; isRecord(current) && chain.length < 6; current = current.cause)
    chain.push(current);
  // client-node's exec auth spawns the plugin: a missing one is ENOENT naming it.
  for (const link of chain) {
    const text = isRecord(link) && typeof link.message === "string" ? link.message : "";
    if (isRecord(link) && link.code === "ENOENT" && /spawn|exec/i.test(text)) {
      const plugin = /spawn(?:Sync)? ([^\s]+) ENOENT/.exec(text)?.[1];
      return { kind: "credential-plugin-missing", message: text, ...(plugin === undefined ? {} : { plugin }) };
    }
  }
  // The transport's failure, as @nodekit/http classifies every one.
  const failure = classifyTransportError(error);
  if (failure.class === "timeout") return { kind: "unreachable", message: "no answer in time" };
  if (failure.code !== undefined) {
    const link = chain.find((l) => isRecord(l) && l.code === failure.code);
    const text = isRecord(link) && typeof link.message === "string" ? link.message : "";
    return {
      kind: "unreachable",
      message: text !== "" ? `${text} (${failure.code})` : failure.code,
      tls: failure.class === "tls",
    };
  }
  const innermost = chain.at(-1);
  const message = isRecord(innermost) && typeof innermost.message === "string" ? innermost.message : String(error);
  return { kind: "failed", message };
}

function parseStatus(body: unknown): { message?: string; reason?: string } {
  let value: unknown = body;
  if (typeof body === "string") {
    try {
      value = JSON.parse(body);
    } catch {
      return body.trim() === "" ? {} : { message: body.trim().slice(0, 500) };
    }
  }
  if (!isRecord(value)) return {};
  return {
    ...(typeof value.message === "string" ? { message: value.message } : {}),
    ...(typeof value.reason === "string" ? { reason: value.reason } : {}),
  };
}
