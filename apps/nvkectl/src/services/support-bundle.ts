import { lstat, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { UserError } from "@nodekit/errors";
import { writeNewFileSafe } from "@nodekit/fs-safe";
import type { Cluster, NodePool, NvkeClient } from "@nodekit/nvke-api";
import { MIN_SECRET_LENGTH, type Redactor, redactCredentialFields } from "@nodekit/process";
import { load } from "js-yaml";
import { create } from "tar";
import { errorCodes } from "../errors.ts";
import { INSTALL_RECORD, type InstallRecord, readInstallRecord } from "./install-record.ts";
import { kubectl, type SiteCluster } from "./kubectl.ts";
import { PROVIDERS } from "./provider-catalogue.ts";
import { getProviders } from "./providers.ts";
import { versions } from "./version.ts";

// `nvkectl support-bundle` (issue 26 §2): one tar.gz (0600) with what support needs to see a
// site, and no secret. First every secret nvkectl can know of is learnt (the values of every
// Secret in the stack's namespaces, the NICo key among them; the site kubeconfig's
// credentials; the controller token, as it is minted; secret-looking environment variables),
// then every part is read, then each is written through the redactor and a pass that blanks
// credential-looking fields. Secrets appear by name, type and keys only. A part that cannot be
// read is an error in index.json, and the bundle is still written. Read-only.

/** The namespaces the stack uses whether or not the install record names them. */
const STACK_NAMESPACES = ["nke-controller", "nke-clients", "capi-system"] as const;
/** What of each stack namespace goes in (Secrets apart: by name, type and keys only). */
const SITE_KINDS = "deployments,replicasets,pods,services,networkpolicies,serviceaccounts";
/** Cluster API's objects, in every namespace (clusterctl's provider inventory first). */
const CLUSTER_API_KINDS = [
  "providers.clusterctl.cluster.x-k8s.io",
  "clusters.cluster.x-k8s.io",
  "machinedeployments.cluster.x-k8s.io",
  "machinesets.cluster.x-k8s.io",
  "machines.cluster.x-k8s.io",
].join(",");
/** Environment variables whose values are secrets by their name (none is written; they are learnt). */
const SECRET_ENV = /TOKEN|PASSWORD|SECRET|API_?KEY|CREDENTIAL/i;

/** One entry of the bundle's `index.json`. */
interface BundleEntry {
  file: string;
  what: string;
  /** Why the part is missing or partial: the error that reading it ended with. */
  error?: string;
  /** Something worth knowing that is not an error (Cluster API is not installed). */
  note?: string;
}

/** One part of the bundle: read first (all of them), written after every secret is learnt. */
interface Part {
  file: string;
  what: string;
  read: () => Promise<{ data: unknown; note?: string }>;
}

export interface SupportBundleOptions {
  /** Where the archive goes (default `./nvkectl-support-<site>-<time>.tar.gz`); never over an existing file. */
  output?: string | undefined;
  /** nvkectl's version. */
  version: string;
  /** The site's name, when one is configured. */
  siteName?: string | undefined;
  /** The site cluster (its kubeconfig, kubectl runner and timeouts). */
  cluster: () => Promise<SiteCluster>;
  /** The controller API's client; its token is learnt by the redactor as it is minted. */
  controller: () => Promise<NvkeClient>;
  /** nvkectl's config file (path and content), without secrets by its schema. */
  config: () => Promise<{ path: string; config: unknown }>;
  redactor: Redactor;
  env: NodeJS.ProcessEnv;
  clock?: () => Date;
  cwd?: string;
}

export interface SupportBundle {
  path: string;
  entries: BundleEntry[];
}

/** Writes the support bundle; what could not be read is an error in its index, not a failure. */
export async function supportBundle(options: SupportBundleOptions): Promise<SupportBundle> {
  const { redactor } = options;
  const clock = options.clock ?? (() => new Date());
  const started = clock();
  // A bundle asked for where one is already refuses first, before the site is read.
  if (options.output !== undefined && (await lstat(options.output).catch(() => undefined)) !== undefined) {
    throw bundleExists(options.output);
  }
  for (const [name, value] of Object.entries(options.env)) {
    if (SECRET_ENV.test(name)) redactor.add(value, name);
  }
  const cluster = memo(options.cluster);
  const controller = memo(options.controller);
  const record = memo(async () => readInstallRecord((await cluster()).runner, target(await cluster())));
  const namespaces = memo(async () => stackNamespaces(await record().catch(() => undefined)));

  // Secrets first: every value is learnt before anything is read, let alone written.
  const secrets = await learnSecrets(cluster, namespaces, redactor).catch((error: unknown) => error);
  await cluster()
    .then((c) => learnKubeconfig(c.kubeconfig, redactor))
    .catch(() => {});

  const parts: Part[] = [
    {
      file: "version.json",
      what: "nvkectl's version, the controller API's, the site cluster's Kubernetes and the installed release (nvkectl version -o json)",
      read: async () => {
        const { report, failure } = await versions({
          client: { version: options.version },
          site: async () => ({ name: options.siteName ?? "", cluster: await cluster(), controller }),
        });
        return { data: report, ...(failure === undefined ? {} : { note: `partial: ${message(failure)}` }) };
      },
    },
    {
      file: "install-record.json",
      what: `the install record (ConfigMap ${INSTALL_RECORD.namespace}/${INSTALL_RECORD.name})`,
      read: async () => {
        const found = await record();
        return found === undefined
          ? { data: null, note: "the site has no install record (nothing is installed)" }
          : { data: found };
      },
    },
    {
      file: "controller.json",
      what: "the controller's state as its API reports it: every cluster and its node pools",
      read: async () => ({ data: await controllerState(await controller()) }),
    },
    {
      file: "providers.json",
      what: "the infrastructure providers (nvkectl get providers -o json)",
      read: async () => ({ data: await getProviders({ cluster: await cluster() }) }),
    },
    {
      file: "site-objects.json",
      what: `the stack's namespaces: ${SITE_KINDS.replaceAll(",", ", ")}, by namespace`,
      read: async () => ({ data: await byNamespace(await cluster(), await namespaces(), ["get", SITE_KINDS]) }),
    },
    {
      file: "events.json",
      what: "the events of the stack's namespaces, oldest first, by namespace",
      read: async () => ({
        data: await byNamespace(await cluster(), await namespaces(), [
          "get",
          "events",
          "--sort-by=.metadata.creationTimestamp",
        ]),
      }),
    },
    {
      file: "cluster-api.json",
      what: "Cluster API's objects in every namespace: clusterctl's providers, Clusters, MachineDeployments, MachineSets, Machines",
      read: async () => {
        const answer = await kubectl(
          await cluster(),
          ["get", CLUSTER_API_KINDS, "--all-namespaces", "--output=json"],
          "reading Cluster API's objects",
        );
        return answer.found
          ? { data: tidy(JSON.parse(answer.stdout)) }
          : { data: null, note: "Cluster API is not installed on the site cluster" };
      },
    },
    {
      file: "secrets.json",
      what: "the Secrets of the stack's namespaces by name, type and keys: never a value",
      read: async () => {
        if (!isLearnt(secrets)) throw secrets;
        return {
          data: Object.fromEntries(secrets.shown),
          ...(secrets.short.length === 0
            ? {}
            : {
                note: `values shorter than ${MIN_SECRET_LENGTH} characters cannot be redacted wherever they occur: ${secrets.short.join(", ")}`,
              }),
        };
      },
    },
    {
      file: "config.json",
      what: "nvkectl's config (its sites: name, URL, kubeconfig path); never the token cache or a kubeconfig",
      read: async () => ({ data: await options.config() }),
    },
  ];

  const read = await Promise.all(
    parts.map(async (part) => {
      try {
        return { part, ...(await part.read()) };
      } catch (error) {
        return { part, data: null, error: message(error) };
      }
    }),
  );

  const stamp = started.toISOString().replace(/[:.]/g, "-");
  const name = `nvkectl-support-${options.siteName === undefined ? "" : `${options.siteName}-`}${stamp}`;
  const out = options.output ?? join(options.cwd ?? process.cwd(), `${name}.tar.gz`);
  const scrub = (text: string) => redactCredentialFields(redactor.redact(text));
  const work = await mkdtemp(join(tmpdir(), "nvkectl-support-"));
  const dir = join(work, name);
  try {
    await mkdir(dir, { mode: 0o700 });
    const entries: BundleEntry[] = [];
    for (const { part, data, ...rest } of read) {
      await writeFile(join(dir, part.file), scrub(`${JSON.stringify(data, null, 2)}\n`), { mode: 0o600, flag: "wx" });
      const entry: BundleEntry = { file: part.file, what: part.what };
      if ("error" in rest && rest.error !== undefined) entry.error = scrub(rest.error);
      if ("note" in rest && rest.note !== undefined) entry.note = scrub(rest.note);
      entries.push(entry);
    }
    const index = {
      createdAt: started.toISOString(),
      nvkectl: options.version,
      site: options.siteName ?? null,
      files: [{ file: "index.json", what: "what each file is, and what could not be read" }, ...entries],
    };
    await writeFile(join(dir, "index.json"), scrub(`${JSON.stringify(index, null, 2)}\n`), {
      mode: 0o600,
      flag: "wx",
    });
    // Whole or not at all, never over an existing file.
    const written = await writeNewFileSafe(out, () => create({ gzip: true, cwd: work, portable: true }, [name]), {
      mode: 0o600,
      what: "the support bundle",
    });
    if (written.kind === "exists") {
      throw bundleExists(out);
    }
    return { path: out, entries };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const isLearnt = (value: unknown): value is Awaited<ReturnType<typeof learnSecrets>> =>
  typeof value === "object" && value !== null && "shown" in value && value.shown instanceof Map;

const bundleExists = (out: string) =>
  new UserError(errorCodes.SUPPORT_BUNDLE_EXISTS, `${out} exists; nothing was overwritten`, {
    next: `give another --output, or remove ${basename(out)} from ${dirname(out)} first`,
  });

/** The first call's promise, shared by every later call (each part asks; one request is made). */
function memo<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}

const target = (cluster: SiteCluster) => ({
  kubeconfig: cluster.kubeconfig,
  context: cluster.context,
  requestTimeout: cluster.requestTimeout,
});

/** The namespaces the install record names, the stack's own, and each provider's. */
function stackNamespaces(record: InstallRecord | undefined): string[] {
  return [
    ...new Set([
      ...(record?.namespaces ?? []),
      ...STACK_NAMESPACES,
      ...PROVIDERS.map((provider) => provider.controller.namespace),
    ]),
  ].sort();
}

function message(error: unknown): string {
  if (error instanceof UserError) return error.why === undefined ? error.message : `${error.message}: ${error.why}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Every Secret of the stack's namespaces: each value (and its base64 form) learnt by the
 * redactor; by name, type and keys only, what the bundle shows of them.
 */
async function learnSecrets(
  cluster: () => Promise<SiteCluster>,
  namespaces: () => Promise<string[]>,
  redactor: Redactor,
): Promise<{ shown: Map<string, Array<{ name: string; type?: string; keys: string[] }>>; short: string[] }> {
  const site = await cluster();
  const shown = new Map<string, Array<{ name: string; type?: string; keys: string[] }>>();
  const short = new Set<string>();
  for (const namespace of await namespaces()) {
    const answer = await kubectl(
      site,
      ["get", "secrets", "--namespace", namespace, "--output=json"],
      `reading the Secrets of ${namespace}`,
    );
    if (!answer.found) continue;
    const list = JSON.parse(answer.stdout) as {
      items?: Array<{ metadata?: { name?: string }; type?: string; data?: Record<string, string> }>;
    };
    const items = list.items ?? [];
    for (const secret of items) {
      for (const [key, value] of Object.entries(secret.data ?? {})) {
        const decoded = Buffer.from(value, "base64").toString("utf8");
        // Each token-like line of a multi-line value (a key file, a kubeconfig) on its own too.
        const lines = decoded.split("\n").filter((line) => /^\S{16,}$/.test(line.trim()));
        for (const secretValue of [value, decoded, ...lines]) {
          if (secretValue.trim().length >= MIN_SECRET_LENGTH) redactor.add(secretValue.trim());
          else if (secretValue.trim() !== "") short.add(`${namespace}/${secret.metadata?.name ?? ""} ${key}`);
        }
      }
    }
    if (items.length > 0) {
      shown.set(
        namespace,
        items.map((secret) => ({
          name: secret.metadata?.name ?? "",
          ...(secret.type === undefined ? {} : { type: secret.type }),
          keys: Object.keys(secret.data ?? {}).sort(),
        })),
      );
    }
  }
  return { shown, short: [...short] };
}

/** The site kubeconfig's credentials (tokens, passwords, client keys), learnt: the kubeconfig itself is never written. */
async function learnKubeconfig(path: string, redactor: Redactor): Promise<void> {
  const config = load(await readFile(path, "utf8")) as {
    users?: Array<{ user?: Record<string, unknown> }>;
  } | null;
  for (const user of config?.users ?? []) {
    for (const key of ["token", "password", "client-key-data"]) {
      const value = user.user?.[key];
      if (typeof value !== "string") continue;
      redactor.add(value, `the site kubeconfig's ${key}`);
      if (key === "client-key-data") redactor.add(Buffer.from(value, "base64").toString("utf8"), key);
    }
  }
}

/** Every cluster, and each one's node pools, page by page. */
async function controllerState(client: NvkeClient) {
  const clusters: Cluster[] = [];
  let next: string | undefined;
  do {
    const page = await client.listClustersPage(next === undefined ? {} : { continue: next });
    clusters.push(...page.items);
    next = page.continue === "" ? undefined : page.continue;
  } while (next !== undefined);
  const nodePools: Record<string, NodePool[]> = {};
  for (const cluster of clusters) {
    const pools: NodePool[] = [];
    let after: string | undefined;
    do {
      const page = await client.listNodePoolsPage({
        clusterID: cluster.id,
        ...(after === undefined ? {} : { continue: after }),
      });
      pools.push(...page.items);
      after = page.continue === "" ? undefined : page.continue;
    } while (after !== undefined);
    nodePools[cluster.name] = pools;
  }
  return { url: client.baseUrl, clusters, nodePools };
}

/** `kubectl <args> --namespace NS -o json` for each namespace, its items by namespace. */
async function byNamespace(cluster: SiteCluster, namespaces: readonly string[], args: readonly string[]) {
  const result: Record<string, unknown[]> = {};
  for (const namespace of namespaces) {
    const answer = await kubectl(
      cluster,
      [...args, "--namespace", namespace, "--output=json"],
      `reading ${args[1]} in ${namespace}`,
    );
    if (!answer.found) continue;
    const items = (tidy(JSON.parse(answer.stdout)) as { items?: unknown[] }).items ?? [];
    if (items.length > 0) result[namespace] = items;
  }
  return result;
}

/** A kubectl list without the noise: managedFields, and the last-applied copy of each object. */
function tidy(list: unknown): unknown {
  const { items } = list as { items?: Array<{ metadata?: Record<string, unknown> }> };
  for (const item of items ?? []) {
    const metadata = item.metadata;
    if (metadata === undefined) continue;
    delete metadata.managedFields;
    const annotations = metadata.annotations as Record<string, string> | undefined;
    if (annotations !== undefined) delete annotations["kubectl.kubernetes.io/last-applied-configuration"];
  }
  return list;
}
