import { readdir } from "node:fs/promises";
import { isAbsolute, join, normalize, relative, resolve } from "node:path";
import {
  decodeUtf8,
  type LocatedDocument,
  parseYamlWith,
  readInputFile,
  readYamlDocuments,
  validateDocument,
} from "@nodekit/documents";
import type { Problem } from "@nodekit/errors";
import {
  CHART_PIN_FILE,
  type ChartPin,
  ChartPinSchema,
  type ClusterApiPins,
  DEPLOY_PATH_FILE,
  DeployPathFileSchema,
  type DeployPathItemSpec,
  OVERLAY_FILE,
  VALUES_FILE,
  ValuesSchema,
} from "./schema.ts";

/** The file system a deploy path is read from (injected so that callers and tests control it). */
export interface DeployPathFs {
  /**
   * The file's bytes (checked to be UTF-8, as a problem located at the first byte that is
   * not) or its text, or undefined when there is no such file.
   */
  readFile(path: string): Promise<Uint8Array | string | undefined>;
  /** The directory's entries, or undefined when there is no such directory. */
  list(path: string): Promise<Array<{ name: string; directory: boolean }> | undefined>;
}

const absent = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return undefined;
  throw error;
};

/** The real file system; a file over 8 MiB (or a device, a pipe that never ends) is INPUT_TOO_LARGE. */
export const nodeFs: DeployPathFs = {
  readFile: (path) => readInputFile(path).catch(absent),
  list: (path) =>
    readdir(path, { withFileTypes: true })
      .then((entries) => entries.map((entry) => ({ name: entry.name, directory: entry.isDirectory() })))
      .catch(absent),
};

/** One object of a manifests item: what the item waits for after applying it. */
export interface ManifestObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** The file it is in (absolute). */
  file: string;
}

interface ItemBase {
  name: string;
  namespace: string | undefined;
  dependsOn: readonly string[];
  timeout: string;
  stackValues: boolean;
  /** The item's directory (absolute). */
  dir: string;
  /** The item's directory as the user would name it (the deploy path as given, joined with the item's path). */
  displayDir: string;
}

export interface ChartItem extends ItemBase {
  kind: "chart";
  pin: ChartPin;
  release: string;
  /** The local chart directory (absolute) when the pin names no repository. */
  localChart?: string;
  /** values.yaml then overlay.yaml, those present (absolute). */
  valuesFiles: readonly string[];
}

export interface ManifestsItem extends ItemBase {
  kind: "manifests";
  /** The manifest files, sorted by name (absolute); applied in this order. */
  files: readonly string[];
  objects: readonly ManifestObject[];
}

export type DeployPathItem = ChartItem | ManifestsItem;

/** A deploy path that validated: everything the planner needs, nothing left to read. */
export interface DeployPath {
  name: string;
  /** The deploy path directory (absolute). */
  root: string;
  clusterAPI?: ClusterApiPins;
  items: readonly DeployPathItem[];
}

export interface LoadDeployPathOptions {
  fs?: DeployPathFs;
  /** Resolves the directory when it is relative. Default: process.cwd(). */
  cwd?: string;
}

export interface LoadedDeployPath {
  /** Present exactly when `problems` is empty. */
  deployPath?: DeployPath;
  /** Every problem of the whole path, each with its file, line and field. */
  problems: Problem[];
}

const MANIFEST = /\.(ya?ml|json)$/;

/** A file's text; when its bytes are not UTF-8, that is one problem (pushed) and the text is empty. */
async function readText(fs: DeployPathFs, path: string, source: string, problems: Problem[]) {
  const content = await fs.readFile(path);
  if (content === undefined || typeof content === "string") return content;
  const decoded = decodeUtf8(content, { source });
  problems.push(...decoded.problems);
  return decoded.text ?? "";
}

/**
 * Reads and validates a whole deploy path in one pass: `nvke-deploy.yaml`, then every
 * item's directory (its chart pin and values, or its manifests). Never throws for bad
 * input: every problem comes back with its file, line and field path.
 */
export async function loadDeployPath(dir: string, options: LoadDeployPathOptions = {}): Promise<LoadedDeployPath> {
  const fs = options.fs ?? nodeFs;
  const root = resolve(options.cwd ?? process.cwd(), dir);
  const indexSource = join(dir, DEPLOY_PATH_FILE);
  const encoding: Problem[] = [];
  const text = await readText(fs, join(root, DEPLOY_PATH_FILE), indexSource, encoding);
  if (encoding.length > 0) return { problems: encoding };
  if (text === undefined) {
    const listed = await fs.list(root);
    return {
      problems: [
        {
          severity: "error",
          source: listed === undefined ? dir : indexSource,
          message:
            listed === undefined
              ? "is not a directory; a deploy path is a directory holding nvke-deploy.yaml"
              : `does not exist; a deploy path lists its items in ${DEPLOY_PATH_FILE}`,
        },
      ],
    };
  }
  const read = readYamlDocuments(text, { source: indexSource, maxDocuments: 1, fileKind: "nvke-deploy.yaml" });
  const document = read.documents[0];
  if (read.problems.length > 0 || document === undefined) {
    return {
      problems:
        read.problems.length > 0 ? read.problems : [{ severity: "error", source: indexSource, message: "is empty" }],
    };
  }
  const validated = validateDocument(DeployPathFileSchema, document, { source: indexSource });
  const problems = [...validated.problems];
  // Items are checked even when the index has problems, so that one pass reports everything.
  const specs = validated.value?.spec.items ?? looseItems(document.value);
  const items = await Promise.all(
    specs.map((spec, index) => loadItem(fs, root, dir, spec, index, document, indexSource, problems)),
  );
  if (problems.length > 0 || validated.value === undefined) return { problems: sortProblems(problems) };
  const { metadata, spec } = validated.value;
  return {
    deployPath: {
      name: metadata.name,
      root,
      ...(spec.clusterAPI === undefined ? {} : { clusterAPI: spec.clusterAPI }),
      items: items.filter((item): item is DeployPathItem => item !== undefined),
    },
    problems: [],
  };
}

/** The items of an index that did not validate, as far as they can be read, to check their directories too. */
function looseItems(value: unknown): DeployPathItemSpec[] {
  const items = (value as { spec?: { items?: unknown } } | null)?.spec?.items;
  if (!Array.isArray(items)) return [];
  return items.flatMap((item: unknown) => {
    const { name, path } = (item ?? {}) as { name?: unknown; path?: unknown };
    if (typeof name !== "string" || (path !== undefined && typeof path !== "string")) return [];
    return [{ name, ...(path === undefined ? {} : { path }), timeout: "5m", stackValues: false }];
  });
}

async function loadItem(
  fs: DeployPathFs,
  root: string,
  dir: string,
  spec: DeployPathItemSpec,
  index: number,
  index_: LocatedDocument,
  indexSource: string,
  problems: Problem[],
): Promise<DeployPathItem | undefined> {
  const itemPath = spec.path ?? spec.name;
  if (isAbsolute(itemPath) || normalize(itemPath).startsWith("..")) return undefined;
  const itemDir = join(root, itemPath);
  const displayDir = join(dir, itemPath);
  const entries = await fs.list(itemDir);
  if (entries === undefined) {
    const field = spec.path === undefined ? "name" : "path";
    problems.push({
      severity: "error",
      source: indexSource,
      path: ["spec", "items", index, field],
      line: index_.lineOf(["spec", "items", index, field]) ?? 1,
      message: `names the item directory ${displayDir}, which does not exist`,
    });
    return undefined;
  }
  const base: ItemBase = {
    name: spec.name,
    namespace: spec.namespace,
    dependsOn: spec.dependsOn ?? [],
    timeout: spec.timeout,
    stackValues: spec.stackValues,
    dir: itemDir,
    displayDir,
  };
  const files = entries.filter((entry) => !entry.directory && MANIFEST.test(entry.name)).map((entry) => entry.name);
  if (files.includes(CHART_PIN_FILE)) {
    const extra = files.filter((name) => ![CHART_PIN_FILE, VALUES_FILE, OVERLAY_FILE].includes(name));
    if (extra.length > 0) {
      problems.push({
        severity: "error",
        source: displayDir,
        message: `is both a chart item (${CHART_PIN_FILE}) and a manifests item (${extra.join(", ")}); an item holds one or the other: move the manifests to an item of their own`,
      });
      return undefined;
    }
    return loadChartItem(fs, root, base, files, problems);
  }
  if (files.length === 0) {
    problems.push({
      severity: "error",
      source: displayDir,
      message: `holds neither ${CHART_PIN_FILE} nor manifests (*.yaml, *.yml, *.json)`,
    });
    return undefined;
  }
  return loadManifestsItem(fs, base, files.sort(), problems);
}

async function loadChartItem(
  fs: DeployPathFs,
  root: string,
  base: ItemBase,
  files: readonly string[],
  problems: Problem[],
): Promise<ChartItem | undefined> {
  const pinSource = join(base.displayDir, CHART_PIN_FILE);
  const pinText = (await readText(fs, join(base.dir, CHART_PIN_FILE), pinSource, problems)) ?? "";
  const pin = parseYamlWith(ChartPinSchema, pinText, { source: pinSource, fileKind: "a chart pin" });
  problems.push(...pin.problems);
  const valuesFiles: string[] = [];
  for (const name of [VALUES_FILE, OVERLAY_FILE]) {
    if (!files.includes(name)) continue;
    const source = join(base.displayDir, name);
    const text = (await readText(fs, join(base.dir, name), source, problems)) ?? "";
    const values = parseYamlWith(ValuesSchema, text, { source, fileKind: "a values file", empty: { value: {} } });
    problems.push(...values.problems.map((problem) => ({ ...problem, line: problem.line ?? 1 })));
    valuesFiles.push(join(base.dir, name));
  }
  if (pin.value === undefined) return undefined;
  let localChart: string | undefined;
  if (pin.value.repository === undefined) {
    localChart = resolve(base.dir, pin.value.chart);
    const inside = relative(root, localChart);
    const chartFile =
      inside.startsWith("..") || isAbsolute(inside) ? undefined : await fs.readFile(join(localChart, "Chart.yaml"));
    if (chartFile === undefined) {
      problems.push({
        severity: "error",
        source: pinSource,
        path: ["chart"],
        value: pin.value.chart,
        message:
          inside.startsWith("..") || isAbsolute(inside)
            ? "names a local chart outside the deploy path; keep local charts inside it, or name a repository"
            : "names a local chart directory that holds no Chart.yaml (with no repository, chart is a directory relative to the item)",
      });
      return undefined;
    }
  }
  return {
    ...base,
    kind: "chart",
    pin: pin.value,
    release: pin.value.release ?? base.name,
    ...(localChart === undefined ? {} : { localChart }),
    valuesFiles,
  };
}

async function loadManifestsItem(
  fs: DeployPathFs,
  base: ItemBase,
  files: readonly string[],
  problems: Problem[],
): Promise<ManifestsItem> {
  const objects: ManifestObject[] = [];
  for (const name of files) {
    const file = join(base.dir, name);
    const source = join(base.displayDir, name);
    const read = readYamlDocuments((await readText(fs, file, source, problems)) ?? "", {
      source,
      language: "YAML or JSON",
    });
    problems.push(...read.problems);
    for (const document of read.documents) {
      if (document.value === null) continue;
      const object = document.value as Record<string, unknown>;
      const meta = (typeof object === "object" && object !== null ? object.metadata : undefined) as
        | Record<string, unknown>
        | undefined;
      const fault = (path: string[], message: string) =>
        problems.push({ severity: "error", source, path, line: document.lineOf(path) ?? 1, message });
      if (typeof object !== "object" || Array.isArray(object)) {
        fault([], "holds a document that is not a Kubernetes object (a mapping with apiVersion, kind and metadata)");
        continue;
      }
      if (typeof object.apiVersion !== "string")
        fault(["apiVersion"], "is required: every manifest names its apiVersion");
      if (typeof object.kind !== "string") fault(["kind"], "is required: every manifest names its kind");
      if (typeof meta?.name !== "string") fault(["metadata", "name"], "is required: every manifest names its object");
      if (base.namespace !== undefined && typeof meta?.namespace === "string" && meta.namespace !== base.namespace) {
        fault(
          ["metadata", "namespace"],
          `is ${JSON.stringify(meta.namespace)}, but the item's namespace is ${JSON.stringify(base.namespace)}: an item's manifests are applied into its namespace; move the object to an item of its own`,
        );
      }
      if (typeof object.apiVersion === "string" && typeof object.kind === "string" && typeof meta?.name === "string") {
        objects.push({
          apiVersion: object.apiVersion,
          kind: object.kind,
          name: meta.name,
          ...(typeof meta.namespace === "string" ? { namespace: meta.namespace } : {}),
          file,
        });
      }
    }
  }
  return { ...base, kind: "manifests", files: files.map((name) => join(base.dir, name)), objects };
}

function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort((a, b) => a.source.localeCompare(b.source) || (a.line ?? 0) - (b.line ?? 0));
}
