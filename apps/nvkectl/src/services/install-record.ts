import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { DeployPath } from "@nodekit/deploy-path";
import { type KubeTarget, kubectlCall, runKube } from "@nodekit/kube";
import type { ProcessRunner } from "@nodekit/process";

/** One object the install applies itself, as the inventory records it. */
export interface OwnedObject {
  apiVersion: string;
  kind: string;
  /** Absent for cluster-scoped objects, and for namespaced ones applied to the kubeconfig's namespace. */
  namespace?: string;
  name: string;
  /** The plan item that applies it. */
  item: string;
}

// The install record (issue 26 §2, NV-15): what is installed on a site, in one object on the
// site itself that an operator (kubectl get configmap) and nvkectl (version, upgrade,
// uninstall, support-bundle) read. It is the ConfigMap kube-system/nvkectl-install-record,
// written by the install's last item, together with the inventory pruning reads (`objects`).
// kube-system, not the controller's namespace: the record outlives every namespace the
// install creates, so an uninstall that stops midway still knows what is left to remove.
//
// Its data keys, each a string (JSON where structured):
//   installedAt        the time of the run that last changed what is recorded (a re-run that
//                      changes nothing keeps it: the object does not move)
//   site               the site spec's name
//   deployPath         the deploy path's name
//   release            {name, version, digest, file}: the release description the install
//                      pulled from (digest: sha256 of its bytes), absent without --release
//   items              [{id, kind, version?, chart?, chartDigest?, namespace?, digest}]: each
//                      deploy path item; digest: sha256 over the item directory's files
//   providers          [{type, name, version, digest?}]: the Cluster API providers (digest:
//                      of their components artifact, with a release)
//   certManager        the cert-manager version clusterctl installs
//   namespaces         the namespaces the install creates (the controller's, the items',
//                      the manifests' Namespace objects), which the uninstall deletes
//   crds               the CustomResourceDefinitions of the manifest items, by name
//   stackConfigSha256  sha256 of the stack config file the install read
//   objects            the objects the install applies itself (the prune inventory)

export const INSTALL_RECORD = { namespace: "kube-system", name: "nvkectl-install-record" } as const;
const RECORD_LABELS = {
  "app.kubernetes.io/managed-by": "nvkectl",
  "app.kubernetes.io/component": "install-record",
} as const;

export interface RecordedItem {
  id: string;
  kind: "chart" | "manifests";
  /** The chart's version (chart items). */
  version?: string;
  /** The chart's name, or its oci:// reference with a release. */
  chart?: string;
  /** The Helm release (chart items). */
  release?: string;
  /** The chart's digest, with a release. */
  chartDigest?: string;
  namespace?: string;
  /** sha256 over the item directory's files (values, overlay, manifests, a local chart). */
  digest: string;
}

export interface RecordedProvider {
  type: string;
  name: string;
  version: string;
  /** The components artifact's digest, with a release. */
  digest?: string;
}

interface RecordedRelease {
  name: string;
  version: string;
  /** sha256 of the release description's bytes, as release export wrote them. */
  digest: string;
  /** The file, as the install was given it. */
  file: string;
}

/** What the record says, parsed. */
export interface InstallRecord {
  installedAt: string;
  site: string;
  deployPath: string;
  release?: RecordedRelease;
  items: RecordedItem[];
  providers: RecordedProvider[];
  certManager: string;
  namespaces: string[];
  crds: string[];
  stackConfigSha256: string;
  objects: OwnedObject[];
}

export const sha256 = (bytes: Uint8Array | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** sha256 over a directory's files, each as its relative path and bytes, in path order: stable across machines. */
async function directoryDigest(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  const hash = createHash("sha256");
  for (const file of files) {
    const bytes = await readFile(file);
    hash.update(`${relative(dir, file)}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return `sha256:${hash.digest("hex")}`;
}

/** The deploy path's items as the record lists them. */
export async function recordedItems(deployPath: DeployPath): Promise<RecordedItem[]> {
  const items: RecordedItem[] = [];
  for (const item of deployPath.items) {
    const digest = await directoryDigest(item.dir);
    const namespace = item.namespace === undefined ? {} : { namespace: item.namespace };
    if (item.kind === "manifests") {
      items.push({ id: item.name, kind: "manifests", ...namespace, digest });
      continue;
    }
    const chart =
      item.pin.repository?.startsWith("oci://") === true
        ? `${item.pin.repository}/${item.pin.chart}`
        : item.pin.chart.replace(/^\.\//, "");
    items.push({
      id: item.name,
      kind: "chart",
      version: item.pin.version,
      chart,
      release: item.release,
      ...(item.pin.digest === undefined ? {} : { chartDigest: item.pin.digest }),
      ...namespace,
      digest,
    });
  }
  return items;
}

/** The record's content without its time: what decides whether a run changes it. */
export type RecordContent = Omit<InstallRecord, "installedAt">;

const json = (value: unknown) => `${JSON.stringify(value, null, 1)}\n`;

/** The ConfigMap's data for a record. */
function recordData(record: InstallRecord): Record<string, string> {
  return {
    installedAt: record.installedAt,
    site: record.site,
    deployPath: record.deployPath,
    ...(record.release === undefined ? {} : { release: json(record.release) }),
    items: json(record.items),
    providers: json(record.providers),
    certManager: record.certManager,
    namespaces: json(record.namespaces),
    crds: json(record.crds),
    stackConfigSha256: record.stackConfigSha256,
    objects: json(record.objects),
  };
}

/** The ConfigMap the install applies. */
export function recordConfigMap(record: InstallRecord) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: INSTALL_RECORD.name, namespace: INSTALL_RECORD.namespace, labels: { ...RECORD_LABELS } },
    data: recordData(record),
  };
}

/**
 * The record a run writes: this content, at `now`, unless the site's record says the same
 * already, whose time is kept (a re-run that changes nothing leaves the object as it was).
 */
export function nextRecord(content: RecordContent, previous: InstallRecord | undefined, now: Date): InstallRecord {
  const same =
    previous !== undefined &&
    JSON.stringify(recordData({ ...content, installedAt: "" })) ===
      JSON.stringify(recordData({ ...previous, installedAt: "" }));
  return { ...content, installedAt: same ? previous.installedAt : now.toISOString() };
}

const parseJson = (text: string | undefined): unknown => {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;
const arrayOf = <T>(value: unknown, keep: (entry: Record<string, unknown>) => boolean): T[] =>
  Array.isArray(value) ? (value.filter((entry) => isObject(entry) && keep(entry)) as T[]) : [];
const stringArray = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string") : [];
const strings = (entry: Record<string, unknown>, ...keys: string[]) =>
  keys.every((key) => typeof entry[key] === "string");

/**
 * The record from the ConfigMap's data; what it cannot read is left out (never throws: the
 * object is on the cluster, where anyone with the rights may have edited it).
 */
export function parseInstallRecord(data: Record<string, string> | undefined): InstallRecord {
  const d = data ?? {};
  const release = parseJson(d.release);
  return {
    installedAt: d.installedAt ?? "",
    site: d.site ?? "",
    deployPath: d.deployPath ?? "",
    ...(isObject(release) && strings(release, "name", "version", "digest", "file")
      ? { release: release as unknown as RecordedRelease }
      : {}),
    items: arrayOf<RecordedItem>(parseJson(d.items), (e) => strings(e, "id", "kind", "digest")),
    providers: arrayOf<RecordedProvider>(parseJson(d.providers), (e) => strings(e, "type", "name", "version")),
    certManager: d.certManager ?? "",
    namespaces: stringArray(parseJson(d.namespaces)),
    crds: stringArray(parseJson(d.crds)),
    stackConfigSha256: d.stackConfigSha256 ?? "",
    objects: arrayOf<OwnedObject>(parseJson(d.objects), (e) => strings(e, "apiVersion", "kind", "name", "item")),
  };
}

export const RECORD_GET_ARGS = [
  "get",
  "ConfigMap.v1.",
  INSTALL_RECORD.name,
  "--namespace",
  INSTALL_RECORD.namespace,
  "--ignore-not-found",
  "--output=json",
] as const;

/** The site's install record, or undefined when there is none (nothing was installed, or it was uninstalled). */
export async function readInstallRecord(runner: ProcessRunner, target: KubeTarget): Promise<InstallRecord | undefined> {
  const answer = await runKube(runner, kubectlCall(target, RECORD_GET_ARGS), {
    doing: "reading the install record",
    kubeconfig: target.kubeconfig,
    cluster: "the site cluster",
  });
  if (!answer.found || answer.stdout.trim() === "") return undefined;
  const configMap = JSON.parse(answer.stdout) as { data?: Record<string, string> };
  return parseInstallRecord(configMap.data);
}
