import { access, constants } from "node:fs/promises";
import { delimiter, join, resolve } from "node:path";
import type {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  ObservableMiddleware,
} from "@kubernetes/client-node";
import { UserError } from "@nodekit/errors";
import { assertKubeconfig, kubeErrorCodes as errorCodes } from "@nodekit/kube-calls";
import { INHERITED_ENV, matchesEnvName } from "@nodekit/process";
import type { KubeWhere } from "./error.ts";
import { kubeHttpLibrary } from "./transport.ts";

/**
 * The cluster to talk to: a kubeconfig file path, the files of KUBECONFIG's list (merged as
 * kubectl merges them), or a KubeConfig a platform team has already loaded (its current
 * context is used).
 */
export type KubeconfigSource = string | readonly string[] | KubeConfig;

/** One connection to the Kubernetes API through @kubernetes/client-node, with what error messages need. */
export interface KubeClient {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly apiextensions: ApiextensionsV1Api;
  readonly customObjects: CustomObjectsApi;
  /**
   * Per-request options, to pass to every call: a timeout on it, and the HTTP library that
   * sends it again when the API server answers 429 with Retry-After (see {@link connect}).
   */
  readonly requestOptions: Parameters<CoreV1Api["readNamespacedConfigMap"]>[1];
  /**
   * The same, for a read of one object whose metadata is all that is wanted: the API server
   * is asked for a PartialObjectMetadata (as kubectl does for `-o name`), so that no
   * Secret's data is ever fetched. Only `metadata` of the answer is filled.
   */
  readonly metadataOnly: Parameters<CoreV1Api["readNamespacedConfigMap"]>[1];
  /** The kubeconfig path, when there is one (KUBECONFIG's list of several, as the variable holds it). */
  readonly kubeconfigPath: string | undefined;
  readonly server: string | undefined;
  /** The kubeconfig's user entry name (the authenticated identity may differ). */
  readonly userName: string | undefined;
}

export interface ConnectOptions {
  /**
   * How long one call may take, its whole answer included, and any retries of it: an answer
   * 429 (or 5xx) with Retry-After is sent again after the wait it asks for, a few times
   * ({@link retries}), while the wait ends within this time (kubectl's habit).
   */
  requestTimeoutMs: number;
  /** How many times one call is sent again when the API server asks for it (default 5). */
  retries?: number | undefined;
  /** The kubeconfig's context to use instead of its current-context (kubectl's --context). */
  context?: string | undefined;
  /**
   * The environment a kubeconfig's exec plugin is started from (default process.env): it
   * gets only the part every child gets (@nodekit/process INHERITED_ENV) and its own `env`.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A kubeconfig loaded, its context chosen, and the files it was read from. */
export interface LoadedKubeconfig {
  config: KubeConfig;
  /** The files read, in order (none for a KubeConfig given). */
  files: string[];
}

/**
 * Loads @kubernetes/client-node and reads the kubeconfig: one file, or several merged with
 * client-node's own loading (what `KubeConfig.loadFromDefault` does with KUBECONFIG's list,
 * here with the list given rather than read from process.env), by kubectl's rules: the first
 * file that sets current-context decides it, and a cluster, user or context a later file
 * names again is the first file's. `context` (kubectl's --context) then replaces the
 * current-context: KUBE_CONTEXT_NOT_FOUND (a usage error) when no file defines it, naming
 * the contexts there are and the files read.
 */
export async function loadKubeconfig(
  source: KubeconfigSource,
  options: Pick<ConnectOptions, "context" | "env"> = {},
): Promise<LoadedKubeconfig> {
  const k8s = await import("@kubernetes/client-node");
  let kc: KubeConfig;
  let files: string[] = [];
  if (typeof source === "string" || Array.isArray(source)) {
    files = (typeof source === "string" ? [source] : (source as readonly string[])).map((file) => resolve(file));
    kc = new k8s.KubeConfig();
    for (const [i, file] of files.entries()) {
      await assertKubeconfig(file);
      const one = i === 0 ? kc : new k8s.KubeConfig();
      try {
        one.loadFromFile(file);
      } catch (error) {
        throw new UserError(errorCodes.KUBECONFIG_INVALID, `kubeconfig ${file} cannot be loaded`, {
          // The parser's message may quote the file's lines (tokens, passwords): only where it failed is said.
          why: describeLoadError(error),
          facts: { kubeconfig: file },
        });
      }
      if (one !== kc) {
        // client-node's merge throws on a name seen before; kubectl keeps the first file's.
        const seen = (list: readonly { name: string }[]) => new Set(list.map((entry) => entry.name));
        const [clusters, users, contexts] = [seen(kc.clusters), seen(kc.users), seen(kc.contexts)];
        one.clusters = one.clusters.filter((entry) => !clusters.has(entry.name));
        one.users = one.users.filter((entry) => !users.has(entry.name));
        one.contexts = one.contexts.filter((entry) => !contexts.has(entry.name));
        const keep = kc.currentContext !== "" && kc.currentContext !== undefined;
        kc.mergeConfig(one, keep);
      }
    }
    await narrowExecPlugins(kc, options.env ?? process.env);
  } else {
    kc = source as KubeConfig;
  }
  const name =
    files.length === 0
      ? "the given KubeConfig"
      : files.length === 1
        ? `kubeconfig ${files[0]}`
        : `the kubeconfig KUBECONFIG lists (${files.join(", ")})`;
  const facts = files.length === 0 ? {} : { facts: { kubeconfig: files.join(delimiter) } };
  if (options.context !== undefined) {
    const contexts = kc.getContexts().map((context) => context.name);
    if (!contexts.includes(options.context)) {
      throw new UserError(
        errorCodes.KUBE_CONTEXT_NOT_FOUND,
        `${name} has no context ${JSON.stringify(options.context)}`,
        {
          why: contexts.length === 0 ? "it defines no context" : `its contexts are ${contexts.join(", ")}`,
          next: "name one of its contexts with --context, or leave --context out for its current-context",
          ...facts,
        },
      );
    }
    kc.setCurrentContext(options.context);
  }
  if (kc.getCurrentCluster() === null) {
    throw new UserError(errorCodes.KUBECONFIG_INVALID, `${name} has no current cluster`, {
      why: `its current context ${JSON.stringify(kc.getCurrentContext() ?? "")} does not name a cluster it defines`,
      next: "set current-context to a context whose cluster is the one to use, or name one with --context",
      ...facts,
    });
  }
  return { config: kc, files };
}

/**
 * Loads @kubernetes/client-node and opens the kubeconfig ({@link loadKubeconfig}). The
 * library is imported here, on first use, so that code paths which never ask the cluster
 * never pay for it (≈ 0.3 s). Calls made with the client's `requestOptions` (or
 * `metadataOnly`) are sent by undici's `Dispatcher.request` ({@link kubeHttpLibrary}): an
 * answer 429 with Retry-After is asked again within `requestTimeoutMs`, as kubectl does.
 * The client's requests keep their connections (`keepConnections` of
 * @nodekit/kube-connections, applied to a KubeConfig given too): a wait that polls the API pays one TLS handshake, not one a poll.
 */
export async function connect(source: KubeconfigSource, options: ConnectOptions): Promise<KubeClient> {
  const [k8s, undici, { keepConnections }] = await Promise.all([
    import("@kubernetes/client-node"),
    import("undici"),
    // Loaded with the client (not by a start whose command never asks the cluster).
    import("@nodekit/kube-connections"),
  ]);
  const loaded = await loadKubeconfig(source, options);
  const kc = keepConnections(loaded.config);
  const files = loaded.files;
  const kubeconfigPath = files.length === 0 ? undefined : files.join(delimiter);
  const cluster = kc.getCurrentCluster() as NonNullable<ReturnType<KubeConfig["getCurrentCluster"]>>;
  const timeoutMs = options.requestTimeoutMs;
  // The object API hands call-time middleware to the Observable API, so it returns Observables.
  const timeout: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      return new k8s.Observable(Promise.resolve(context));
    },
    post: (context) => new k8s.Observable(Promise.resolve(context)),
  };
  const metadataOnly: ObservableMiddleware = {
    pre: (context) => {
      context.setHeaderParam("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
      return new k8s.Observable(Promise.resolve(context));
    },
    post: (context) => new k8s.Observable(Promise.resolve(context)),
  };
  // kubectl's habits over client-node's fetch: a 429 with Retry-After is asked again, any port is reached.
  const httpApi = kubeHttpLibrary(
    { k8s, undici },
    { timeoutMs, ...(options.retries === undefined ? {} : { retries: options.retries }) },
  );
  return {
    config: kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    apiextensions: kc.makeApiClient(k8s.ApiextensionsV1Api),
    customObjects: kc.makeApiClient(k8s.CustomObjectsApi),
    requestOptions: { middleware: [timeout], middlewareMergeStrategy: "append", httpApi },
    metadataOnly: { middleware: [timeout, metadataOnly], middlewareMergeStrategy: "append", httpApi },
    kubeconfigPath,
    server: cluster.server,
    userName: kc.getCurrentUser()?.name,
  };
}

/** Where env(1) is on every Linux distribution (NixOS keeps this one path too). */
const ENV_PROGRAM = "/usr/bin/env";

/**
 * @kubernetes/client-node starts a user's exec plugin with the whole environment of this
 * process, and so with every secret in it (an API token, a registry password, the NICo
 * key). Each exec plugin of a kubeconfig this module loaded is started through env(1)
 * instead, with every variable unset that no child gets: the same environment a plugin
 * started by kubectl through the process runner sees. Only names are in its argv, never
 * values. What the plugin needs is the kubeconfig's to say, in the plugin's `env`. A
 * plugin that is not installed is left as it is: nothing runs, and client-node's own
 * error names it (KUBE_CREDENTIAL_PLUGIN_MISSING).
 */
async function narrowExecPlugins(kc: KubeConfig, parent: Readonly<Record<string, string | undefined>>): Promise<void> {
  const narrow = async (exec: unknown): Promise<unknown> => {
    if (exec === null || typeof exec !== "object") return exec;
    const { command, args, env } = exec as { command?: unknown; args?: unknown; env?: unknown };
    if (typeof command !== "string" || command === "" || !(await installed(command, parent.PATH))) return exec;
    const own = new Set(
      Array.isArray(env) ? env.flatMap((entry) => (typeof entry?.name === "string" ? [entry.name as string] : [])) : [],
    );
    const unset = Object.keys(parent).filter(
      (name) => parent[name] !== undefined && !own.has(name) && !matchesEnvName(name, INHERITED_ENV),
    );
    return {
      ...exec,
      command: ENV_PROGRAM,
      args: [...unset.flatMap((name) => ["-u", name]), "--", command, ...(Array.isArray(args) ? args : [])],
    };
  };
  kc.users = await Promise.all(
    kc.users.map(async (user) => {
      const config = user.authProvider?.config as Record<string, unknown> | undefined;
      if (user.exec !== undefined) return { ...user, exec: await narrow(user.exec) };
      if (config?.exec !== undefined) {
        return {
          ...user,
          authProvider: { ...user.authProvider, config: { ...config, exec: await narrow(config.exec) } },
        };
      }
      return user;
    }),
  );
}

/** Whether `command` runs: a path (with a slash) that is executable, or a name found on `path`, as spawn looks it up. */
async function installed(command: string, path: string | undefined): Promise<boolean> {
  const executable = (file: string) =>
    access(file, constants.X_OK).then(
      () => true,
      () => false,
    );
  if (command.includes("/")) return executable(command);
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir !== "" && (await executable(join(dir, command)))) return true;
  }
  return false;
}

/** js-yaml's "bad indentation (3:5)" without the excerpt of the file it appends. */
function describeLoadError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split("\n")[0] ?? message;
  const mark = (error as { mark?: { line?: number; column?: number } }).mark;
  if (mark && typeof mark.line === "number") {
    const reason = (error as { reason?: unknown }).reason;
    return `YAML syntax error at line ${mark.line + 1}, column ${(mark.column ?? 0) + 1}${typeof reason === "string" ? `: ${reason}` : ""}`;
  }
  return first.replace(/\s*\(\d+:\d+\)\s*$/, "");
}

/** Where a client's errors say they happened. */
export function whereOf(client: KubeClient, doing: string, cluster?: string): KubeWhere {
  return { doing, kubeconfig: client.kubeconfigPath, server: client.server, cluster };
}
