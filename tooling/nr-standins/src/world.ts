import { appendFileSync, existsSync, readFileSync, statSync } from "node:fs";
import { Agent } from "node:https";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Method, type RetryPolicy, request, type Transport } from "@nodekit/http";
import { load } from "js-yaml";

// What the recording stand-ins (k3s-install.ts, liqoctl.ts) share: the world they act on
// — the agent cluster (a real kube-apiserver: the test tier's, or the sandbox's agent
// cluster), NodeRings' side (the emulator's peering server, which no program can reach) and
// the files they keep — and how they record each call for the tests. For apps/nr's tests and
// the sandbox's demo shell only, never a user's PATH. Run by node as they are, from their
// shims: node's built-ins, js-yaml (to read the kubeconfig) and @nodekit/http from its build
// (dist/, which `./run setup` builds with the nr they serve; its sources would cost each run
// ~50 ms more CPU in type stripping).
//
// They reach the agent cluster's API in their own process, through @nodekit/http's
// `request()` over an https.Agent with the kubeconfig's CA and credential (`call` below), and
// never spawn kubectl: each stand-in run is a fresh short-lived process making a handful of
// requests, where a kubectl per request cost ~0.1 CPU-s and loading @kubernetes/client-node
// (what calico-operator.ts, one long-lived watcher, uses) ~0.5 CPU-s (issue 25). The helpers
// below keep kubectl's semantics: get-or-undefined on 404, apply, status patches, delete
// --ignore-not-found, wait for a CRD's Established condition, the API's message in errors.

/** What a shim on PATH tells its stand-in (nr passes none of its own environment through). */
export interface World {
  /** The agent cluster's admin kubeconfig (what k3s writes to /etc/rancher/k3s/k3s.yaml). */
  kubeconfig: string;
  /** Where the stand-ins keep their own files: records, k3s's running config, what reached NodeRings. */
  state: string;
  /** The directory on PATH the stand-ins live in (k3s's BIN_DIR: /usr/local/bin on a VM). */
  bin: string;
  /** NodeRings' Liqo cluster id (its ForeignCluster's name on the agent). */
  platformClusterId: string;
  /** The address k3s would take from the default route's interface (its node IP). */
  nodeIp: string;
}

export function world(): World {
  const need = (name: string) => {
    const value = process.env[name];
    if (value === undefined || value === "") throw new Error(`stand-in: ${name} is not set by its shim`);
    return value;
  };
  return {
    kubeconfig: need("NR_STANDIN_KUBECONFIG"),
    state: need("NR_STANDIN_STATE"),
    bin: need("NR_STANDIN_BIN"),
    platformClusterId: need("NR_STANDIN_PLATFORM_CLUSTER_ID"),
    nodeIp: need("NR_STANDIN_NODE_IP"),
  };
}

/** One call as a stand-in saw it, appended to `<state>/records.jsonl`. */
export interface Recorded {
  tool: "k3s-install" | "liqoctl" | "k3s-uninstall";
  argv: string[];
  env: Record<string, string | undefined>;
  /** For liqoctl peer and unpeer: each kubeconfig as it was when liqoctl ran. */
  kubeconfigs?: { local: KubeconfigSeen; remote: KubeconfigSeen };
  exitCode?: number;
}

export interface KubeconfigSeen {
  path: string;
  mode: number;
  /** Whether it holds a bearer token (a peering user's or a consumer credential's). */
  hasToken: boolean;
  server: string;
}

export function record(w: World, entry: Recorded): void {
  appendFileSync(join(w.state, "records.jsonl"), `${JSON.stringify(entry)}\n`);
}

/** The agent cluster's API server as its kubeconfig names it: the current context's cluster and user. */
interface Connection {
  server: URL;
  transport: Transport;
  headers: Record<string, string>;
}

interface KubeconfigFile {
  "current-context"?: string;
  clusters?: Array<{ name: string; cluster: Record<string, string | boolean | undefined> }>;
  users?: Array<{ name: string; user: Record<string, unknown> }>;
  contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
}

const connections = new Map<string, Connection>();

/**
 * The connection for `w.kubeconfig` (read once per process): its server, its CA (or
 * insecure-skip-tls-verify), and its credential — a client certificate and key, or a bearer
 * token — each as `*-data` or as a file relative to the kubeconfig, as kubectl takes them.
 * `request()`'s transport is one https.Agent with them, which keeps its TLS connection between
 * the calls of one stand-in run and lets the process exit when it is idle (node's https.Agent
 * unrefs a free socket).
 */
function connection(w: World): Connection {
  const known = connections.get(w.kubeconfig);
  if (known !== undefined) return known;
  const config = load(readFileSync(w.kubeconfig, "utf8")) as KubeconfigFile;
  const context = config.contexts?.find((c) => c.name === config["current-context"])?.context;
  const cluster = config.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  const user = config.users?.find((u) => u.name === context?.user)?.user ?? {};
  if (cluster === undefined || typeof cluster.server !== "string")
    throw new Error(`stand-in: ${w.kubeconfig} names no cluster for its current context`);
  const pem = (data: unknown, file: unknown): Buffer | undefined =>
    typeof data === "string"
      ? Buffer.from(data, "base64")
      : typeof file === "string"
        ? readFileSync(resolve(dirname(w.kubeconfig), file))
        : undefined;
  const token =
    typeof user.token === "string"
      ? user.token
      : typeof user.tokenFile === "string"
        ? readFileSync(resolve(dirname(w.kubeconfig), user.tokenFile), "utf8").trim()
        : undefined;
  const agent = new Agent({
    keepAlive: true,
    ca: pem(cluster["certificate-authority-data"], cluster["certificate-authority"]),
    rejectUnauthorized: cluster["insecure-skip-tls-verify"] !== true,
    cert: pem(user["client-certificate-data"], user["client-certificate"]),
    key: pem(user["client-key-data"], user["client-key"]),
  });
  const made: Connection = {
    server: new URL(cluster.server),
    transport: { agentFor: async () => agent, close: () => agent.destroy() },
    headers: { Accept: "application/json", ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
  };
  connections.set(w.kubeconfig, made);
  return made;
}

/** An answer of the API server other than 2xx: its Status's reason and message, as kubectl prints them. */
class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string, message: string) {
    super(`Error from server (${reason}): ${message}`);
    this.code = code;
    this.reason = reason;
  }
}

/**
 * When client-go sends a call again (rest/with_retry.go, checkWait): an answer 429 (the API
 * server's "storage is (re)initializing" for a CRD just Established) or 5xx with a
 * whole-seconds Retry-After, after that many seconds, up to 5 times, whatever the method; a
 * lost connection only for a GET. Without a Retry-After, a 429 waits 1 s, then twice as long.
 */
const retry = (method: Method): RetryPolicy => ({
  attempts: 5,
  statuses: [429],
  retryIf: (answer) => answer.status >= 500 && /^\d+$/.test(answer.headers["retry-after"]?.trim() ?? ""),
  failures: method === "GET" ? ["connection-lost"] : [],
  backoffMs: 1000,
});

/**
 * One request to the agent cluster's API server, in this process (`@nodekit/http`'s
 * `request()`): the decoded JSON answer, or an {@link ApiError} with the API's reason and message.
 */
async function call(
  w: World,
  method: "GET" | "PATCH" | "DELETE",
  path: string,
  body?: { type: string; value: object },
): Promise<Record<string, unknown>> {
  const { server, transport, headers } = connection(w);
  const answer = await request({
    url: new URL(server.pathname.replace(/\/$/, "") + path, server),
    method,
    headers: body === undefined ? headers : { ...headers, "Content-Type": body.type },
    ...(body === undefined ? {} : { body: JSON.stringify(body.value) }),
    transport,
    retry: retry(method),
    // Apply (forced), a status merge patch and a delete are sent again as client-go does.
    idempotent: true,
  });
  const decoded = (() => {
    try {
      return JSON.parse(answer.text()) as Record<string, unknown>;
    } catch {
      return { message: answer.text() };
    }
  })();
  if (answer.status >= 200 && answer.status < 300) return decoded;
  throw new ApiError(
    answer.status,
    typeof decoded.reason === "string" ? decoded.reason : String(answer.status),
    typeof decoded.message === "string" ? decoded.message : `${method} ${path}: ${answer.status}`,
  );
}

/**
 * The REST path of a resource collection (no `name`) or object: `/api/v1/…` for the core
 * group, `/apis/<group>/<version>/…` for the others; `namespace` for a namespaced one.
 */
export function resource(apiVersion: string, plural: string, name?: string, namespace?: string): string {
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}${namespace === undefined ? "" : `/namespaces/${namespace}`}/${plural}${name === undefined ? "" : `/${name}`}`;
}

/** The answer, or undefined when it is a 404 (the object, or its resource type, is not there). */
async function unless404<T>(answer: Promise<T>): Promise<T | undefined> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof ApiError && error.code === 404) return undefined;
    throw error;
  }
}

/** A GET of one object (`kubectl get … -o json`), or undefined when it (or its resource type) is not there. */
export function getJson(w: World, path: string): Promise<Record<string, unknown> | undefined> {
  return unless404(call(w, "GET", path));
}

/** The items of a collection (`kubectl get <plural> [-A | -n ns] -o json`). */
export async function list<T>(w: World, path: string): Promise<T[]> {
  return ((await call(w, "GET", path)).items ?? []) as T[];
}

/** An object as the stand-ins apply it. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** The field manager the stand-ins apply as (kubectl's own is `kubectl`). */
const FIELD_MANAGER = "nr-stand-in";

/**
 * Server-side apply of each object in order (`kubectl apply --server-side --force-conflicts`):
 * created when missing, otherwise the fields given are set and the ones this manager set
 * before and no longer gives are removed, as a client-side `kubectl apply` would; fields
 * other managers own are taken over rather than refused, as a client-side apply never
 * refuses. The plural is the kind's lowercase plus "s", which holds for every kind the
 * stand-ins apply (Namespace, Node, ConfigMap, CustomResourceDefinition, Liqo's kinds).
 */
export async function apply(w: World, ...items: Manifest[]): Promise<void> {
  for (const item of items) {
    const path = resource(item.apiVersion, `${item.kind.toLowerCase()}s`, item.metadata.name, item.metadata.namespace);
    await call(w, "PATCH", `${path}?fieldManager=${FIELD_MANAGER}&force=true`, {
      type: "application/apply-patch+yaml",
      value: item,
    });
  }
}

/** A merge patch of an object's status subresource (`kubectl patch … --subresource=status --type=merge`). */
export async function patchStatus(w: World, path: string, status: object): Promise<void> {
  await call(w, "PATCH", `${path}/status`, { type: "application/merge-patch+json", value: { status } });
}

/**
 * `kubectl delete … --ignore-not-found`: a 404 is no error; unless `wait` is false
 * (`--wait=false`), it returns once the object is gone (its finalizers done), as kubectl
 * waits by default.
 */
export async function remove(w: World, path: string, options: { wait: boolean } = { wait: true }): Promise<void> {
  if ((await unless404(call(w, "DELETE", path))) === undefined || !options.wait) return;
  await until(`${path} to be deleted`, 60_000, async () => (await getJson(w, path)) === undefined);
}

/**
 * Waits until each CRD is Established, a null `.status.conditions` (a CRD just created) being
 * "not yet": what @nodekit/kube-calls' crdEstablishedWaitArgs calls do, not what `kubectl wait
 * --for=condition=Established` alone does (it fails at once on null, kubernetes/kubernetes#66439).
 */
export async function waitEstablished(w: World, names: readonly string[], timeoutMs: number): Promise<void> {
  for (const name of names) {
    await until(`the condition on customresourcedefinitions/${name}`, timeoutMs, async () => {
      const crd = await getJson(w, resource("apiextensions.k8s.io/v1", "customresourcedefinitions", name));
      const conditions = (crd?.status as { conditions?: Array<{ type: string; status: string }> } | undefined)
        ?.conditions;
      return (conditions ?? []).some((c) => c.type === "Established" && c.status === "True");
    });
  }
}

/** Polls `done` every 100 ms until it holds, or fails as kubectl wait does when `timeoutMs` passes. */
async function until(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() >= deadline) throw new Error(`error: timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A JSON file of the stand-in's own, or `fallback` when it is not there. */
export function readState<T>(w: World, name: string, fallback: T): T {
  const file = join(w.state, name);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : fallback;
}

/**
 * The flags of a Go (cobra/pflag, urfave/cli) command line: `--name value`, `--name=value`,
 * repeated ones kept in order, booleans as "true"; the rest are the positional arguments.
 */
export function parseFlags(
  argv: readonly string[],
  booleans: ReadonlySet<string>,
): { flags: Map<string, string[]>; args: string[] } {
  const flags = new Map<string, string[]>();
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (!arg.startsWith("--")) {
      args.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (booleans.has(name)) value = "true";
    else {
      const next = argv[i + 1];
      if (next === undefined) fail(`flag needs an argument: --${name}`);
      value = next;
      i++;
    }
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { flags, args };
}

/** Exits as the real program does on an error: its message on stderr, exit 1. */
export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Go's time.ParseDuration, as liqoctl's --timeout flags take it. */
export function isGoDuration(text: string): boolean {
  return /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text);
}

export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** An IPv4 CIDR's network and prefix, or undefined. */
export function parseCidr(text: string): { base: number; prefix: number } | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  if (match === null) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const prefix = Number(match[5]);
  if (octets.some((octet) => octet > 255) || prefix > 32) return undefined;
  const value = octets.reduce((acc, octet) => acc * 256 + octet, 0);
  const size = 2 ** (32 - prefix);
  return { base: Math.floor(value / size) * size, prefix };
}

export function cidrContains(cidr: string, ip: string): boolean {
  const net = parseCidr(cidr);
  const addr = parseCidr(`${ip}/32`);
  if (net === undefined || addr === undefined) return false;
  const size = 2 ** (32 - net.prefix);
  return addr.base >= net.base && addr.base < net.base + size;
}

/** A kubeconfig's server and whether it carries a token (JSON or the simple YAML kubectl writes). */
export function readKubeconfig(path: string): KubeconfigSeen | undefined {
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, "utf8");
  const server = /"?server"?\s*:\s*"?([^"\s,]+)"?/.exec(text)?.[1] ?? "";
  const hasToken = /"?token"?\s*:\s*"?[A-Za-z0-9._~+/=-]{8,}"?/.test(text);
  return { path, mode: statSync(path).mode & 0o777, hasToken, server };
}
