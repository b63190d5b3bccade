import { readdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type DeployPath, planDeployPathItems, readDeployPath } from "@nodekit/deploy-path";
import { decodeUtf8, readInputFile } from "@nodekit/documents";
import { BugError, UserError } from "@nodekit/errors";
import { assertTrustedDir, ensurePrivateDir, writeFileSafe } from "@nodekit/fs-safe";
import {
  assertKubeconfig,
  clusterctlCall,
  isolatedToolEnv,
  type KubeTarget,
  kubectlCall,
  kubeToolError,
  runKube,
} from "@nodekit/kube";
import {
  type ActionHandler,
  action,
  createPlan,
  exec,
  type Plan,
  type PlanItem,
  planFrom,
  runPlan,
} from "@nodekit/plan";
import { formatCall, type ProcessRunner, type Redactor } from "@nodekit/process";
import { parseSiteSpec, type SiteSpec } from "@nodekit/sitespec";
import { type ImageChoice, readStackConfig, type StackConfig, stackCredentials } from "@nodekit/stack-config";
import { dump, load } from "js-yaml";
import { errorCodes } from "../errors.ts";
import { manifestObjects, observePrune, type PruneObservation, prunable, pruneItem } from "./install-prune.ts";
import {
  type InstallRecord,
  nextRecord,
  type OwnedObject,
  type RecordContent,
  recordedItems,
  sha256,
} from "./install-record.ts";
import {
  type HelmRegistryLogin,
  helmRegistryLogin,
  type RegistryConfigHooks,
  removeLeftoverRegistryConfig,
  withHelmRegistryConfig,
} from "./install-registry-login.ts";
import {
  checkReleaseContent,
  type PinnedValuesFile,
  pinDeployPath,
  pinStackImages,
  type ReleasePinning,
  readReleaseFile,
} from "./install-release.ts";
import { type ObjectKey, PROVIDERS } from "./provider-catalogue.ts";
import type { RegistryAccess } from "./release-artifacts.ts";
import { kubectlRequestTimeout } from "./time.ts";
import { clusterctlFor, SITE_KUBE_TOOLS, toolProblems } from "./tools.ts";

/** The field manager of every server-side apply the install makes. */
const FIELD_MANAGER = "nvkectl";
/** The label the shipped controller chart gives its pods itself (its Deployment selects by it). */
const CONTROLLER_NAME_LABEL = { key: "app.kubernetes.io/name", value: "nvke-controller" } as const;
/** The controller's copy of the NICo API key, in its own namespace (a pod reads Secrets of its namespace only). */
const NICO_CREDENTIALS_SECRET = "nvke-nico-credentials";
/** The NicoIdentity the install creates for the NICo provider's credentials Secret. */
const NICO_IDENTITY_NAME = "default";
const ARCHITECTURES = ["amd64", "arm64"] as const;
type Architecture = (typeof ARCHITECTURES)[number];
/** The plan items the install adds around the deploy path's; a deploy path item may not use these names. */
const OWN_ITEMS = [
  "cluster-api",
  "storage-class",
  "node-architecture",
  "nico-credentials",
  "spire-patch",
  "client-networks",
  "prune",
] as const;

/** Mount the SPIRE agent's Workload API socket (SPIFFE CSI driver) into a Cluster API controller. */
const SPIRE_SOCKET_DIR = "/run/spire/agent-sockets";
function spirePatch(container: string): string {
  return JSON.stringify({
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: container,
              env: [{ name: "SPIFFE_ENDPOINT_SOCKET", value: `unix://${SPIRE_SOCKET_DIR}/spire-agent.sock` }],
              volumeMounts: [{ name: "spire-agent-socket", mountPath: SPIRE_SOCKET_DIR, readOnly: true }],
            },
          ],
          volumes: [{ name: "spire-agent-socket", csi: { driver: "csi.spiffe.io", readOnly: true } }],
        },
      },
    },
  });
}

export interface InstallInputs {
  /** The site spec file, as the user named it. */
  siteSpec: string;
  stackConfig: string;
  /** The deploy path directory (default: the shipped deploy/nico). */
  deployPath: string;
  kubeconfig: string;
  /** Where the install keeps the files it renders and helm/clusterctl's own HOME; default under XDG_STATE_HOME. */
  workDir?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Every secret read (the NICo API key) is registered here before anything is planned. */
  redactor: Redactor;
  /** A release description (release export wrote it): charts, images and providers pinned by digest. */
  release?: string | undefined;
  /** How the release's registry is reached (for the provider components and helm's pulls). */
  registry?: Pick<RegistryAccess, "plainHttp" | "caFile" | "allowTokenRealms" | "warn"> | undefined;
  /** --request-timeout: how long each of the install's kubectl requests to the site cluster may take, in ms. */
  requestTimeoutMs?: number | undefined;
  /** The clock the install record's time is read from. */
  now?: () => Date;
}

type ReleaseProvider = ReleasePinning["release"]["providers"][number];

/** What `--release` adds to the context: the pinned deploy path, the providers' components, helm's registry login. */
interface ReleaseContext extends ReleasePinning {
  /** `type/name` → the release's provider. */
  providers: ReadonlyMap<string, ReleaseProvider>;
  /** The docker-format file helm reads registry credentials from (the user's helm or docker config), when one exists. */
  helmRegistryConfig?: string;
  /**
   * With the registry credential in the environment: the config the run writes for helm
   * (outside the plan) and removes after it; helm reads it instead of helmRegistryConfig.
   */
  helmRegistryLogin?: HelmRegistryLogin;
  /** The stack's images, pinned by the release; set once the architecture is known. */
  stackImages?: { profiles: string; controller?: string };
}

/** What the read-only observations found; the planner decides from this alone. */
interface InstallObservations {
  architecture: Architecture;
  nodes: number;
  /** Installed Cluster API providers, `type/name` → version (the clusterctl inventory). */
  providers: Record<string, string>;
  /** The install's inventory and what it lists that is no longer rendered (absent: nothing recorded). */
  prune?: PruneObservation;
}

/** Everything read before planning: the documents, then the cluster. */
export interface InstallContext {
  site: SiteSpec;
  stack: StackConfig;
  /** The stack config's directory: its relative paths resolve from here. */
  stackDir: string;
  deployPath: DeployPath;
  target: KubeTarget;
  workDir: string;
  nicoApiKey: string;
  observations: InstallObservations;
  release?: ReleaseContext;
  registry?: InstallInputs["registry"] & { env?: NodeJS.ProcessEnv };
  /** The install record the run writes last (install-record.ts). */
  record: InstallRecord;
  /**
   * `type/name` of the installed providers this run moves to the pinned version with
   * clusterctl upgrade apply (`nvkectl upgrade apply`, after its plan allowed it); any other
   * installed at another version is refused (PROVIDER_VERSION_MISMATCH).
   */
  providerUpgrades?: ReadonlySet<string>;
}

export async function readSiteSpec(path: string, cwd: string): Promise<SiteSpec> {
  let bytes: Uint8Array;
  try {
    bytes = await readInputFile(resolve(cwd, path), { source: path, what: "site spec" });
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(errorCodes.SITE_SPEC_UNREADABLE, `site spec ${path} cannot be read`, {
      why: (error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : String(error),
      facts: { file: path },
    });
  }
  const decoded = decodeUtf8(bytes, { source: path });
  const parsed =
    decoded.text === undefined
      ? { spec: undefined, problems: decoded.problems }
      : parseSiteSpec(decoded.text, { source: path });
  if (parsed.spec === undefined) {
    const count = parsed.problems.length;
    throw new UserError(
      errorCodes.SITE_SPEC_FILE_INVALID,
      `site spec ${path} has ${count} problem${count === 1 ? "" : "s"}; nothing was changed`,
      { problems: parsed.problems },
    );
  }
  return parsed.spec;
}

/** The documents, checked before the cluster is asked anything: every problem of each file at once. */
async function readDocuments(inputs: InstallInputs) {
  const cwd = inputs.cwd ?? process.cwd();
  const env = inputs.env ?? process.env;
  const site = await readSiteSpec(inputs.siteSpec, cwd);
  const stack = await readStackConfig(resolve(cwd, inputs.stackConfig), { source: inputs.stackConfig });
  const deployPath = await readDeployPath(inputs.deployPath, { cwd });
  if (deployPath.clusterAPI === undefined) {
    throw new UserError(
      errorCodes.INSTALL_DEPLOY_PATH_UNUSABLE,
      `deploy path ${inputs.deployPath} pins no Cluster API`,
      {
        why: "the install runs clusterctl init at the versions the deploy path pins in spec.clusterAPI",
        next: "add spec.clusterAPI (version, certManager, infrastructure) to its nvke-deploy.yaml; docs/deploy-path.md shows it",
      },
    );
  }
  const clash = deployPath.items.find((item) => (OWN_ITEMS as readonly string[]).includes(item.name));
  if (clash !== undefined) {
    throw new UserError(
      errorCodes.INSTALL_DEPLOY_PATH_UNUSABLE,
      `deploy path item ${JSON.stringify(clash.name)} uses a name the install keeps for its own step`,
      { why: `the install's own steps are ${OWN_ITEMS.join(", ")}`, next: "rename the item in nvke-deploy.yaml" },
    );
  }
  checkControllerApi(stack, deployPath, inputs);
  const { nicoApiKey } = stackCredentials(stack, env);
  inputs.redactor.add(nicoApiKey, "NVKE_NICO_API_KEY");
  const stateHome = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  const workDir = resolve(cwd, inputs.workDir ?? join(stateHome, "nvkectl", "install", site.metadata.name));
  await checkWorkDir(workDir, inputs.workDir);
  const stackDir = dirname(resolve(cwd, inputs.stackConfig));
  if (inputs.release === undefined) return { site, stack, stackDir, deployPath, workDir, nicoApiKey };
  const release = await readRelease(inputs.release, { cwd, env, deployPath, workDir, redactor: inputs.redactor });
  return { site, stack, stackDir, deployPath: release.deployPath, workDir, nicoApiKey, release };
}

/**
 * The stack config's controllerApi against the deploy path: the NetworkPolicy goes to the
 * namespace of the item that takes the stack's values (the controller chart), and selects
 * pods by labels the chart gives them (the install passes the port and the labels to it).
 */
function checkControllerApi(stack: StackConfig, deployPath: DeployPath, inputs: InstallInputs): void {
  const { podSelector } = stack.controllerApi;
  const namespace = controllerNamespace({ stack, deployPath });
  const controller = deployPath.items.find((item) => item.stackValues);
  const problems: string[] = [];
  if (controller?.namespace !== undefined && controller.namespace !== namespace) {
    problems.push(
      `controllerApi.namespace is ${namespace}, but the deploy path installs the controller (item ${controller.name}) in ${controller.namespace}`,
    );
  }
  const name = podSelector[CONTROLLER_NAME_LABEL.key];
  if (name !== undefined && name !== CONTROLLER_NAME_LABEL.value) {
    problems.push(
      `controllerApi.podSelector sets ${CONTROLLER_NAME_LABEL.key}=${name}, but the controller chart labels its pods ${CONTROLLER_NAME_LABEL.key}=${CONTROLLER_NAME_LABEL.value}`,
    );
  }
  if (problems.length === 0) return;
  throw new UserError(
    errorCodes.INSTALL_CONTROLLER_API_MISMATCH,
    `stack config ${inputs.stackConfig} and deploy path ${inputs.deployPath} disagree about the controller API; nothing was changed:\n  ${problems.join("\n  ")}`,
    {
      why: "the client-networks NetworkPolicy must select the controller's pods, in their namespace, on their port",
      next:
        controller?.namespace !== undefined && controller.namespace !== namespace
          ? `set controllerApi.namespace to ${controller.namespace} (or leave it out)`
          : `leave out controllerApi.podSelector's ${CONTROLLER_NAME_LABEL.key}`,
      facts: { stackConfig: inputs.stackConfig },
    },
  );
}

/** The controller's namespace: the stack config's controllerApi.namespace, else the controller item's, else nke-controller. */
function controllerNamespace(context: Pick<InstallContext, "stack" | "deployPath">): string {
  return (
    context.stack.controllerApi.namespace ??
    context.deployPath.items.find((item) => item.stackValues)?.namespace ??
    "nke-controller"
  );
}

const WORK_DIR = "the install's work directory";

/**
 * The work directory, checked with the other inputs (in the dry run too, creating nothing):
 * what the install writes there is applied with the site's admin kubeconfig, and helm and
 * clusterctl keep their HOME there (plugins, repositories), so one that is not a directory,
 * or that another user owns or may write to (it or a directory above it), is refused
 * before anything runs (INSTALL_WORK_DIR_UNUSABLE, DIR_UNSAFE). A missing one is created
 * 0700 by the first step that writes there, and checked again then.
 */
async function checkWorkDir(workDir: string, given: string | undefined): Promise<void> {
  const unusable = (why: string) =>
    new UserError(errorCodes.INSTALL_WORK_DIR_UNUSABLE, `${WORK_DIR} ${workDir} cannot be used`, {
      why,
      next:
        given === undefined
          ? `remove ${workDir}, or name another directory with --work-dir`
          : "name a directory with --work-dir",
      facts: { path: workDir },
    });
  const isDirectory = await stat(workDir).then(
    (info) => info.isDirectory(),
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw unusable(`it cannot be read (${error.code ?? String(error)})`);
    },
  );
  if (isDirectory === false) {
    throw unusable(
      "it is not a directory: the install writes the files it renders there, and helm and clusterctl keep their HOME in it",
    );
  }
  await assertTrustedDir(workDir, { own: true, what: WORK_DIR });
}

/** The release file, checked against the deploy path: every chart and provider it installs must be in it. */
async function readRelease(
  file: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; deployPath: DeployPath; workDir: string; redactor: Redactor },
): Promise<ReleaseContext> {
  const lib = await import("@nodekit/release");
  const description = await readReleaseFile(file, options.cwd, lib);
  const providers = new Map(description.providers.map((p) => [`${p.type}/${p.name}`, p]));
  const missing = providersOf(options.deployPath).filter((p) => !providers.has(`${p.type}/${p.name}`));
  if (missing.length > 0) {
    throw new UserError(
      errorCodes.RELEASE_INCOMPLETE_FOR_INSTALL,
      `release ${file} lacks ${missing.length} Cluster API provider${missing.length === 1 ? "" : "s"} deploy path ${options.deployPath.name} installs; nothing was changed`,
      {
        problems: missing.map((p) => ({
          severity: "error" as const,
          source: file,
          path: ["providers"],
          message: `has no ${p.type} ${JSON.stringify(p.name)}`,
        })),
        next: "use the release built for this deploy path, or install without --release",
      },
    );
  }
  const pinning = await pinDeployPath(options.deployPath, description, { source: file, workDir: options.workDir, lib });
  const { credentialFilePaths, parseReference } = await import("@nodekit/oci");
  // The credential release verify would use wins: the environment's, when it has one for a chart's registry.
  const chartHosts = pinning.deployPath.items.flatMap((item) =>
    item.kind === "chart" && item.pin.repository?.startsWith("oci://")
      ? [parseReference(`${item.pin.repository}/${item.pin.chart}`).registry]
      : [],
  );
  const login = await helmRegistryLogin(chartHosts, options);
  if (login !== undefined) return { ...pinning, providers, helmRegistryLogin: login };
  const [dockerConfig, helmConfig] = credentialFilePaths({
    env: options.env,
    ...(options.env.HOME ? { homedir: options.env.HOME } : {}),
  });
  let helmRegistryConfig: string | undefined;
  for (const candidate of [helmConfig, dockerConfig]) {
    if (
      candidate !== undefined &&
      (await stat(candidate).then(
        (info) => info.isFile(),
        () => false,
      ))
    ) {
      helmRegistryConfig = candidate;
      break;
    }
  }
  return { ...pinning, providers, ...(helmRegistryConfig === undefined ? {} : { helmRegistryConfig }) };
}

const where = (kubeconfig: string, doing: string) => ({ doing, kubeconfig, cluster: "the site cluster" });

const NODES_ARGS = ["get", "nodes", "--output=json"];

/** The nodes' one architecture, read from the cluster: NODE_ARCHITECTURE_UNKNOWN / _MIXED otherwise. */
async function observeArchitecture(runner: ProcessRunner, target: KubeTarget) {
  const answer = await runKube(
    runner,
    kubectlCall(target, NODES_ARGS),
    where(target.kubeconfig, "reading the nodes' architecture"),
  );
  const items = answer.found ? ((JSON.parse(answer.stdout) as { items?: unknown[] }).items ?? []) : ([] as unknown[]);
  const byArch = new Map<string, string[]>();
  for (const node of items as Array<{
    metadata?: { name?: string; labels?: Record<string, string> };
    status?: { nodeInfo?: { architecture?: string } };
  }>) {
    const arch = node.metadata?.labels?.["kubernetes.io/arch"] ?? node.status?.nodeInfo?.architecture ?? "unknown";
    byArch.set(arch, [...(byArch.get(arch) ?? []), node.metadata?.name ?? "?"]);
  }
  if (items.length === 0) {
    throw new UserError(errorCodes.NODE_ARCHITECTURE_UNKNOWN, "the site cluster has no nodes", {
      why: "the images the stack runs are chosen for the nodes' architecture",
      next: "check that the kubeconfig names the site cluster and that its nodes have joined",
    });
  }
  if (byArch.size > 1) {
    const list = [...byArch].map(([arch, names]) => `${arch} (${names.join(", ")})`).join("; ");
    throw new UserError(
      errorCodes.NODE_ARCHITECTURE_MIXED,
      `the site cluster's nodes are of more than one architecture: ${list}`,
      {
        why: "the stack is installed with the images of one architecture",
        facts: { architectures: [...byArch.keys()].join(",") },
      },
    );
  }
  const [arch] = [...byArch.keys()];
  if (!(ARCHITECTURES as readonly string[]).includes(arch ?? "")) {
    throw new UserError(
      errorCodes.NODE_ARCHITECTURE_UNKNOWN,
      `the site cluster's nodes are ${arch}, which the stack has no images for`,
      {
        why: `the stack ships images for ${ARCHITECTURES.join(" and ")}`,
        facts: { architecture: arch ?? "unknown" },
      },
    );
  }
  return { architecture: arch as Architecture, nodes: items.length };
}

/** The Cluster API providers already installed (clusterctl's inventory), `type/name` → version. */
async function observeProviders(runner: ProcessRunner, target: KubeTarget): Promise<Record<string, string>> {
  const answer = await runKube(
    runner,
    kubectlCall(target, ["get", "providers.clusterctl.cluster.x-k8s.io", "--all-namespaces", "--output=json"]),
    where(target.kubeconfig, "reading the installed Cluster API providers"),
  );
  if (!answer.found) return {};
  const items = (
    JSON.parse(answer.stdout) as { items?: Array<{ type?: string; providerName?: string; version?: string }> }
  ).items;
  return Object.fromEntries((items ?? []).map((p) => [`${p.type}/${p.providerName}`, p.version ?? ""]));
}

/**
 * kubectl, helm and clusterctl, every one asked its version before the cluster is asked
 * anything (in the dry run too), every problem at once: the install never starts a change
 * it cannot finish for want of a tool. clusterctl must be of the Cluster API release series
 * the deploy path (or the release) pins.
 */
async function checkTools(runner: ProcessRunner, deployPath: DeployPath, release: ReleaseContext | undefined) {
  const core = providersOf(deployPath, release).find((p) => p.type === "CoreProvider");
  const tools = SITE_KUBE_TOOLS.map((tool) =>
    tool.spec.command === "clusterctl" && core !== undefined ? clusterctlFor(core.version) : tool,
  );
  const problems = await toolProblems(runner, tools);
  if (problems.length === 0) return;
  throw new UserError(
    errorCodes.INSTALL_PREREQUISITES_MISSING,
    `the install needs ${problems.length === 1 ? "a tool" : `${problems.length} tools`} this host lacks; nothing was changed:\n  ${problems.join("\n  ")}`,
    {
      why: "the install runs kubectl, helm and clusterctl; all are checked before the first change, so a missing one never leaves a half-installed site",
      next: "install what is listed, on PATH, then run the install again",
      facts: { missing: problems.length },
    },
  );
}

/** Reads the documents, then observes the cluster (read-only, in both modes). */
export async function prepareInstall(inputs: InstallInputs, runner: ProcessRunner): Promise<InstallContext> {
  const requestTimeout =
    inputs.requestTimeoutMs === undefined ? undefined : kubectlRequestTimeout(inputs.requestTimeoutMs);
  const documents = await readDocuments(inputs);
  const kubeconfig = resolve(inputs.cwd ?? process.cwd(), inputs.kubeconfig);
  await assertKubeconfig(kubeconfig, "the site cluster's kubeconfig");
  // The files first, then the tools, then the cluster.
  await checkTools(runner, documents.deployPath, documents.release);
  const target: KubeTarget = {
    kubeconfig,
    ...(requestTimeout === undefined ? {} : { requestTimeout }),
  };
  const { architecture, nodes } = await observeArchitecture(runner, target);
  const providers = await observeProviders(runner, target);
  const prune = await observePrune(runner, target, inventoryOf(documents), FIELD_MANAGER);
  const observations = { architecture, nodes, providers, prune };
  const registry = { ...inputs.registry, env: inputs.env ?? process.env };
  const content = await recordContent(documents, inputs, inventoryOf(documents));
  const record = nextRecord(content, prune.record, (inputs.now ?? (() => new Date()))());
  if (documents.release === undefined) return { ...documents, target, observations, registry, record };
  // The stack's images, pinned by the release, for the architecture just read.
  const lib = await import("@nodekit/release");
  const controller = chooseImage(documents.stack.images.controller, architecture, "images.controller");
  const stackImages = pinStackImages(documents.release.release, controller, { source: documents.release.source, lib });
  // What the install pulls and pins, hashed from the registry before anything changes (dry run too).
  await checkReleaseContent(documents.release, { ...registry, redactor: inputs.redactor });
  return { ...documents, release: { ...documents.release, stackImages }, target, observations, registry, record };
}

/** Namespaces every cluster has: never recorded as the install's, never deleted by the uninstall. */
const SYSTEM_NAMESPACES = new Set(["default", "kube-system", "kube-public", "kube-node-lease"]);

/**
 * The namespaces the install creates (the controller's, each item's, the manifests' Namespace
 * objects) and the manifests' CRDs: what pruning never deletes, and the uninstall does.
 */
function createdNamespacesAndCrds(documents: Pick<InstallContext, "stack" | "deployPath">) {
  const objects = manifestObjects(documents.deployPath);
  const namespaces = new Set([
    controllerNamespace(documents),
    ...documents.deployPath.items.flatMap((item) => (item.namespace === undefined ? [] : [item.namespace])),
    ...objects.filter((o) => o.kind === "Namespace").map((o) => o.name),
  ]);
  return {
    namespaces: [...namespaces].filter((n) => !SYSTEM_NAMESPACES.has(n)),
    crds: objects.filter((o) => o.kind === "CustomResourceDefinition").map((o) => o.name),
  };
}

/** What the install record says of this run (install-record.ts): everything but its time. */
async function recordContent(
  documents: Awaited<ReturnType<typeof readDocuments>>,
  inputs: InstallInputs,
  objects: OwnedObject[],
): Promise<RecordContent> {
  const cwd = inputs.cwd ?? process.cwd();
  const { release, deployPath } = documents;
  return {
    site: documents.site.metadata.name,
    deployPath: deployPath.name,
    ...(release === undefined
      ? {}
      : {
          release: {
            name: release.release.metadata.name,
            version: release.release.metadata.version,
            digest: sha256(await readFile(resolve(cwd, release.source))),
            file: release.source,
          },
        }),
    items: await recordedItems(deployPath),
    providers: providersOf(deployPath, release).map((p) => ({
      type: p.type,
      name: p.name,
      version: p.version,
      ...(p.artifact === undefined ? {} : { digest: p.artifact.digest }),
    })),
    certManager: v(deployPath.clusterAPI?.certManager ?? ""),
    ...createdNamespacesAndCrds(documents),
    stackConfigSha256: sha256(await readFile(resolve(cwd, inputs.stackConfig))),
    objects,
  };
}

interface Provider {
  type: "CoreProvider" | "BootstrapProvider" | "ControlPlaneProvider" | "InfrastructureProvider";
  name: string;
  version: string;
  /** clusterctl's flag for it. */
  flag: string;
  label: string;
  components: string;
  controller: { namespace: string; name: string };
  /** With a release: the OCI artifact its components and metadata.yaml are pulled from. */
  artifact?: ReleaseProvider["components"];
}

const v = (version: string) => (version.startsWith("v") ? version : `v${version}`);

/** The providers the deploy path installs; with a release, at the release's versions, from its components. */
function providersOf(deployPath: DeployPath, release?: ReleaseContext): Provider[] {
  if (release === undefined) return pinnedProviders(deployPath);
  return pinnedProviders(deployPath).map((p) => {
    const found = release.providers.get(`${p.type}/${p.name}`);
    return found === undefined ? p : { ...p, version: v(found.version), artifact: found.components };
  });
}

function pinnedProviders(deployPath: DeployPath): Provider[] {
  const pins = deployPath.clusterAPI;
  if (pins === undefined) return [];
  const core = v(pins.version);
  return [
    {
      type: "CoreProvider",
      name: "cluster-api",
      version: core,
      flag: "--core",
      label: "cluster-api",
      components: "core-components.yaml",
      controller: { namespace: "capi-system", name: "capi-controller-manager" },
    },
    {
      type: "BootstrapProvider",
      name: "kubeadm",
      version: core,
      flag: "--bootstrap",
      label: "bootstrap-kubeadm",
      components: "bootstrap-components.yaml",
      controller: { namespace: "capi-kubeadm-bootstrap-system", name: "capi-kubeadm-bootstrap-controller-manager" },
    },
    {
      type: "ControlPlaneProvider",
      name: "kubeadm",
      version: core,
      flag: "--control-plane",
      label: "control-plane-kubeadm",
      components: "control-plane-components.yaml",
      controller: {
        namespace: "capi-kubeadm-control-plane-system",
        name: "capi-kubeadm-control-plane-controller-manager",
      },
    },
    ...pins.infrastructure.map((p): Provider => {
      const [namespace = "", name = ""] = p.controller.split("/");
      return {
        type: "InfrastructureProvider",
        name: p.name,
        version: v(p.version),
        flag: "--infrastructure",
        label: `infrastructure-${p.name}`,
        components: "infrastructure-components.yaml",
        controller: { namespace, name },
      };
    }),
  ];
}

/** Every file clusterctl will read from the provider repository (and, with a release, from the pulled components). */
function repositoryFiles(context: InstallContext): string[] {
  const repository = providerDirectory(context);
  const certManager = v(context.deployPath.clusterAPI?.certManager ?? "");
  return [
    ...providersOf(context.deployPath, context.release).flatMap((p) => [
      join(repository, p.label, p.version, p.components),
      join(repository, p.label, p.version, "metadata.yaml"),
    ]),
    join(providerRepository(context), "cert-manager", certManager, "cert-manager.yaml"),
  ];
}

function providerRepository(context: Pick<InstallContext, "stack" | "stackDir">): string {
  const configured = context.stack.clusterAPI.providerRepository;
  return isAbsolute(configured) ? configured : resolve(context.stackDir, configured);
}

/** Where clusterctl finds the providers: the stack's repository, or the components pulled from the release. */
function providerDirectory(context: InstallContext): string {
  return context.release === undefined ? providerRepository(context) : join(context.workDir, "release-providers");
}

/** The clusterctl configuration: every provider and cert-manager from the local repository, never from GitHub. */
function clusterctlConfig(context: InstallContext): string {
  const repository = providerDirectory(context);
  const certManager = v(context.deployPath.clusterAPI?.certManager ?? "");
  return dump(
    {
      providers: providersOf(context.deployPath, context.release).map((p) => ({
        name: p.name,
        type: p.type,
        url: `file://${join(repository, p.label, p.version, p.components)}`,
      })),
      "cert-manager": {
        url: `file://${join(providerRepository(context), "cert-manager", certManager, "cert-manager.yaml")}`,
        version: certManager,
      },
    },
    { lineWidth: -1 },
  );
}

function chooseImage(choice: ImageChoice | undefined, arch: Architecture, key: string): string | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === "string") return choice;
  const image = choice[arch];
  if (image === undefined) {
    throw new UserError(errorCodes.IMAGE_NOT_CONFIGURED, `the stack config names no ${arch} image in ${key}`, {
      why: `the site's nodes are ${arch}, and ${key} lists images per architecture`,
      next: `add ${key}.${arch}, or give one multi-architecture reference`,
      facts: { key, architecture: arch },
    });
  }
  return image;
}

/** The values the install layers over the items that take the stack's values (stackValues: true). */
function stackValues(context: InstallContext): Record<string, unknown> {
  const { stack, observations } = context;
  const pinned = context.release?.stackImages;
  const profiles = pinned?.profiles ?? chooseImage(stack.images.profiles, observations.architecture, "images.profiles");
  if (profiles === undefined) {
    throw new UserError(errorCodes.IMAGE_NOT_CONFIGURED, "the stack config names no profile content image", {
      why: "without a release, images.profiles names the profile content image",
      next: "set images.profiles in the stack config",
      facts: { key: "images.profiles" },
    });
  }
  const controller =
    context.release === undefined
      ? chooseImage(stack.images.controller, observations.architecture, "images.controller")
      : pinned?.controller;
  return {
    nodeSelector: { "kubernetes.io/arch": observations.architecture },
    nico: {
      endpoint: stack.nico.endpoint,
      organizationId: stack.nico.organizationId,
      apiName: stack.nico.apiName,
      credentialsSecret: NICO_CREDENTIALS_SECRET,
    },
    images: { profiles, ...(controller === undefined ? {} : { controller }) },
    // The controller API's port and pod labels come from the stack config, which the
    // client-networks NetworkPolicy selects by, so the chart and the policy cannot diverge.
    service: { port: stack.controllerApi.port },
    podLabels: stack.controllerApi.podSelector,
  };
}

const manifest = (...objects: object[]) => objects.map((object) => dump(object, { lineWidth: -1 })).join("---\n");

const writeStep = (path: string, content: string, what: string) =>
  action("write-file", `write ${path} (${what})`, { mutates: true, params: { path, content } });

function applyFile(target: KubeTarget, file: string) {
  return exec(
    kubectlCall(target, [
      "apply",
      "--server-side",
      `--field-manager=${FIELD_MANAGER}`,
      "--force-conflicts",
      "--filename",
      file,
    ]),
    { mutates: true, reads: [file] },
  );
}

/**
 * clusterctl init for the providers not yet installed, clusterctl upgrade apply for those the
 * context upgrades; nothing when all are installed at the pinned versions.
 */
function clusterApiItem(context: InstallContext, toolEnv: Record<string, string>): PlanItem {
  const providers = providersOf(context.deployPath, context.release);
  const installed = context.observations.providers;
  const upgrades: Provider[] = [];
  for (const p of providers) {
    const found = installed[`${p.type}/${p.name}`];
    if (found !== undefined && found !== p.version && context.providerUpgrades?.has(`${p.type}/${p.name}`)) {
      upgrades.push(p);
    } else if (found !== undefined && found !== p.version) {
      throw new UserError(
        errorCodes.PROVIDER_VERSION_MISMATCH,
        `Cluster API provider ${p.name} (${p.type}) is installed at ${found}; the deploy path pins ${p.version}`,
        {
          why: "the install installs missing providers and leaves installed ones alone; it does not upgrade them",
          next: `upgrade it with nvkectl upgrade apply (nvkectl upgrade plan shows what it does), or pin ${found} in the deploy path's spec.clusterAPI`,
          facts: { provider: p.name, found, pinned: p.version },
        },
      );
    }
  }
  const missing = providers.filter((p) => installed[`${p.type}/${p.name}`] === undefined);
  const configFile = join(context.workDir, "clusterctl.yaml");
  const title = `Cluster API ${v(context.deployPath.clusterAPI?.version ?? "")} (clusterctl init)`;
  if (missing.length === 0 && upgrades.length === 0) {
    return { id: "cluster-api", title: `${title}: every provider is installed`, steps: [] };
  }
  const wait = ["--wait-providers", "--wait-provider-timeout", "600"];
  const init = ["init", "--config", configFile, ...missing.flatMap((p) => [p.flag, `${p.name}:${p.version}`]), ...wait];
  const upgrade = [
    "upgrade",
    "apply",
    "--config",
    configFile,
    ...upgrades.flatMap((p) => [p.flag, `${p.name}:${p.version}`]),
    ...wait,
  ];
  const calls = [...(missing.length === 0 ? [] : [init]), ...(upgrades.length === 0 ? [] : [upgrade])];
  // With a release, the providers' components are pulled first, each checked against its digest.
  const pulls = [...missing, ...upgrades].flatMap((p) =>
    p.artifact === undefined
      ? []
      : [
          action(
            "pull-provider",
            `pull ${p.label} ${p.version} (${p.components}, metadata.yaml) from ${p.artifact.reference}@${p.artifact.digest} into ${join(providerDirectory(context), p.label, p.version)}`,
            {
              mutates: true,
              params: {
                reference: p.artifact.reference,
                digest: p.artifact.digest,
                dir: join(providerDirectory(context), p.label, p.version),
                files: [p.components, "metadata.yaml"],
              },
            },
          ),
        ],
  );
  const upgraded = upgrades.map((p) => `${p.label} ${installed[`${p.type}/${p.name}`]} → ${p.version}`);
  return {
    id: "cluster-api",
    title:
      upgrades.length === 0
        ? title
        : `${title.replace(" (clusterctl init)", "")}: clusterctl upgrade apply of ${upgraded.join(", ")}${missing.length === 0 ? "" : ", clusterctl init of the rest"}`,
    steps: [
      ...pulls,
      writeStep(
        configFile,
        clusterctlConfig(context),
        "the clusterctl configuration: local provider repositories only",
      ),
      ...calls.map((args) =>
        exec(clusterctlCall(context.target, args, toolEnv), {
          mutates: true,
          reads: [configFile, ...repositoryFiles(context)],
        }),
      ),
    ],
  };
}

/** What renderOwnObjects needs: the documents alone (the inventory is computed before the cluster is observed). */
type OwnInputs = Pick<InstallContext, "stack" | "deployPath" | "nicoApiKey">;

/**
 * The objects the install applies itself, outside the deploy path: the lab StorageClass, the
 * NICo credentials (the controller's namespace and Secret, and the NICo provider's Secret and
 * NicoIdentity when the deploy path installs that provider), and the client-networks
 * NetworkPolicy (none without client networks).
 */
function renderOwnObjects(context: OwnInputs) {
  const { stack } = context;
  const namespace = controllerNamespace(context);
  const nico = nicoProviderCredentials(context.deployPath);
  const apiKeySecret = (ref: ObjectKey) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: ref.name, namespace: ref.namespace },
    type: "Opaque",
    stringData: { apiKey: context.nicoApiKey },
  });
  const storageClass = {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name: stack.storageClass.name,
      annotations: { "storageclass.kubernetes.io/is-default-class": String(stack.storageClass.default) },
    },
    provisioner: stack.storageClass.provisioner,
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
  };
  const credentials = [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    apiKeySecret({ namespace, name: NICO_CREDENTIALS_SECRET }),
    ...(nico === undefined
      ? []
      : [
          apiKeySecret(nico.secret),
          {
            apiVersion: nico.identity.apiVersion,
            kind: nico.identity.kind,
            metadata: { name: NICO_IDENTITY_NAME, namespace: nico.secret.namespace },
            spec: { secretRef: { name: nico.secret.name, namespace: nico.secret.namespace } },
          },
        ]),
  ];
  const policy =
    stack.clientNetworks.length === 0
      ? undefined
      : {
          apiVersion: "networking.k8s.io/v1",
          kind: "NetworkPolicy",
          metadata: { name: "nvke-controller-api-clients", namespace },
          spec: {
            podSelector: { matchLabels: stack.controllerApi.podSelector },
            policyTypes: ["Ingress"],
            ingress: [
              {
                from: stack.clientNetworks.map((cidr) => ({ ipBlock: { cidr } })),
                ports: [{ protocol: "TCP", port: stack.controllerApi.port }],
              },
            ],
          },
        };
  return { storageClass, credentials, policy };
}

/** Every object the install applies itself (its own and the deploy path's manifests), as its inventory records them. */
function inventoryOf(context: OwnInputs): OwnedObject[] {
  const own = renderOwnObjects(context);
  const entry =
    (item: string) =>
    (object: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }) => ({
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: object.metadata.name,
      item,
      ...(object.metadata.namespace === undefined ? {} : { namespace: object.metadata.namespace }),
    });
  return prunable([
    entry("storage-class")(own.storageClass),
    ...own.credentials.map(entry("nico-credentials")),
    ...manifestObjects(context.deployPath),
    ...(own.policy === undefined ? [] : [entry("client-networks")(own.policy)]),
  ]);
}

/**
 * The install as a plan, from what was read and observed (pure): clusterctl init, the lab
 * StorageClass, the NICo credentials Secret, the deploy path item by item (images chosen
 * for the nodes' architecture), the SPIRE patch of the Cluster API controllers, and the
 * NetworkPolicy for the client networks. The dry run prints it; a real run executes it.
 */
export function planInstall(context: InstallContext): Plan {
  const { target, workDir, stack, observations } = context;
  const toolEnv = isolatedToolEnv(join(workDir, "home"));
  const storageClassFile = join(workDir, "storage-class.yaml");
  const own = renderOwnObjects(context);
  const { storageClass, policy } = own;
  const namespace = controllerNamespace(context);
  const nico = nicoProviderCredentials(context.deployPath);
  const credentials = manifest(...own.credentials);
  const valuesFile = join(workDir, "stack-values.yaml");
  const takesValues = context.deployPath.items.filter((item) => item.stackValues).map((item) => item.name);
  const values = takesValues.length === 0 ? undefined : dump(stackValues(context), { lineWidth: -1 });
  const release = context.release;
  const registryConfig = release?.helmRegistryLogin?.path ?? release?.helmRegistryConfig;
  const helmEnv = registryConfig === undefined ? toolEnv : { ...toolEnv, HELM_REGISTRY_CONFIG: registryConfig };
  const deployItems = planDeployPathItems(context.deployPath, {
    target,
    helmEnv,
    fieldManager: FIELD_MANAGER,
    extraValues: Object.fromEntries(takesValues.map((name) => [name, [valuesFile]])),
  })
    .map((item) =>
      // The rendered values are written by each item that reads them, so --from-item finds them too.
      values !== undefined && takesValues.includes(item.id)
        ? {
            ...item,
            steps: [writeStep(valuesFile, values, stackValuesSummary(context)), ...item.steps],
          }
        : item,
    )
    .map((item) => (release === undefined ? item : pinnedItem(item, release, context.registry)));
  const controllers = providersOf(context.deployPath, context.release).map((p) => p.controller);
  const policyFile = join(workDir, "client-networks.yaml");
  const items: PlanItem[] = [
    clusterApiItem(context, toolEnv),
    {
      id: "storage-class",
      title: `the lab StorageClass ${stack.storageClass.name}`,
      steps: [writeStep(storageClassFile, manifest(storageClass), "StorageClass"), applyFile(target, storageClassFile)],
    },
    {
      // Read before planning (the plan depends on it); shown here, in the seed's order, with the call that read it.
      id: "node-architecture",
      title: `the nodes' architecture: ${observations.architecture}`,
      steps: [
        action(
          "observed",
          `${observations.nodes} node${observations.nodes === 1 ? "" : "s"}, all ${observations.architecture}, read with: ${formatCall(kubectlCall(target, NODES_ARGS))}`,
          { mutates: false, params: { architecture: observations.architecture, nodes: observations.nodes } },
        ),
      ],
    },
    {
      id: "nico-credentials",
      title:
        nico === undefined
          ? `the NICo API key as Secret ${namespace}/${NICO_CREDENTIALS_SECRET}`
          : `the NICo API key as Secret ${nico.secret.namespace}/${nico.secret.name}, named by ${nico.identity.kind} ${nico.secret.namespace}/${NICO_IDENTITY_NAME}, and the controller's copy ${namespace}/${NICO_CREDENTIALS_SECRET}`,
      steps: [
        // The key goes on stdin, never in argv or a file.
        exec(
          kubectlCall(
            target,
            ["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "--force-conflicts", "--filename", "-"],
            {
              input: credentials,
            },
          ),
          { mutates: true },
        ),
      ],
    },
    ...deployItems,
    {
      id: "spire-patch",
      title: "the Cluster API controllers patched for SPIRE",
      steps: controllers.flatMap((c) => [
        exec(
          kubectlCall(target, [
            "patch",
            "deployment",
            c.name,
            "--namespace",
            c.namespace,
            "--type=strategic",
            `--patch=${spirePatch("manager")}`,
          ]),
          { mutates: true },
        ),
        exec(
          kubectlCall(target, [
            "rollout",
            "status",
            `deployment/${c.name}`,
            "--namespace",
            c.namespace,
            "--timeout=5m",
          ]),
          {
            mutates: false,
          },
        ),
      ]),
    },
    ...(policy === undefined
      ? []
      : [
          {
            id: "client-networks",
            title: `the NetworkPolicy admitting ${stack.clientNetworks.join(", ")} to the controller API`,
            steps: [writeStep(policyFile, manifest(policy), "NetworkPolicy"), applyFile(target, policyFile)],
          },
        ]),
    pruneItem({
      target,
      fieldManager: FIELD_MANAGER,
      inventoryFile: join(workDir, "install-record.yaml"),
      rendered: inventoryOf(context),
      record: context.record,
      observed: observations.prune,
      writeStep,
    }),
  ];
  return createPlan(`install the NVKE controller stack on site ${context.site.metadata.name}`, items, {
    site: context.site.metadata.name,
    deployPath: context.deployPath.name,
    architecture: observations.architecture,
    nodes: observations.nodes,
    installedProviders: observations.providers,
    ...(observations.prune === undefined
      ? {}
      : {
          inventory: {
            recorded: observations.prune.recorded.length,
            noLongerRendered: observations.prune.stale.map((o) => ({
              apiVersion: o.apiVersion,
              kind: o.kind,
              ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
              name: o.name,
              state: o.state,
            })),
          },
        }),
    ...(release === undefined
      ? {}
      : {
          release: {
            file: release.source,
            name: release.release.metadata.name,
            version: release.release.metadata.version,
          },
        }),
  });
}

/**
 * The NICo provider's credentials Secret and identity kind, as `get providers` reads them
 * (the provider catalogue, docs/providers.md), when the deploy path installs the NICo
 * infrastructure provider; undefined otherwise.
 */
function nicoProviderCredentials(deployPath: DeployPath) {
  const installs = deployPath.clusterAPI?.infrastructure.some((p) => p.name === "nico") ?? false;
  const credentials = PROVIDERS.find((p) => p.name === "nico")?.credentials;
  return installs ? credentials : undefined;
}

function stackValuesSummary(context: InstallContext): string {
  const summary = `the stack's values for ${context.observations.architecture}`;
  const pinned = context.release?.stackImages;
  if (pinned === undefined) return summary;
  const controller = pinned.controller === undefined ? "" : `, images.controller ${pinned.controller}`;
  return `${summary}; pinned by the release: images.profiles ${pinned.profiles}${controller}`;
}

/** A deploy path item under a release: its pinned values files written first, helm told how to reach the registry. */
function pinnedItem(item: PlanItem, release: ReleaseContext, registry: InstallContext["registry"]): PlanItem {
  const files = release.values.filter((file) => file.item === item.id);
  const registryArgs = [
    ...(registry?.plainHttp ? ["--plain-http"] : []),
    ...(registry?.caFile === undefined ? [] : ["--ca-file", registry.caFile]),
  ];
  const steps = item.steps.map((step) =>
    step.kind === "exec" && step.call.command === "helm" && registryArgs.length > 0
      ? { ...step, call: { ...step.call, args: [...step.call.args, ...registryArgs] } }
      : step,
  );
  const login = release.helmRegistryLogin;
  const pulls = steps.some((step) => step.kind === "exec" && step.call.command === "helm");
  const loginStep = login === undefined || !pulls ? [] : [registryConfigStep(login)];
  return { ...item, steps: [...files.map(pinnedValuesStep), ...loginStep, ...steps] };
}

/** What the dry run says of the registry config the run writes for helm: where, for which registries; never its content. */
function registryConfigStep(login: HelmRegistryLogin) {
  const hosts = Object.keys(login.auths).sort();
  return action(
    "helm-registry-config",
    `helm reads the registry credentials for ${hosts.join(", ")} from ${login.path}, generated from NODEKIT_REGISTRY_USERNAME/_PASSWORD (0600, in a fresh 0700 directory) before the run and removed after it`,
    { mutates: false, params: { path: login.path, registries: hosts } },
  );
}

function pinnedValuesStep(file: PinnedValuesFile) {
  const pins = file.pins.map((pin) => `${pin.field}: ${pin.from} -> ${pin.to}`).join(", ");
  return writeStep(file.path, file.content, `${file.source} with its images pinned by the release: ${pins}`);
}

/**
 * The handlers of the plan's actions: the rendered files and the release's provider
 * components, written 0600 in the work dir (@nodekit/fs-safe). What is written there is
 * applied to the cluster with admin rights next, so the work dir must be private (another
 * user could swap a manifest otherwise), and a file is never written through a link nor
 * over another user's file.
 */
const installActions = (context: InstallContext, redactor: Redactor): Readonly<Record<string, ActionHandler>> => ({
  "pull-provider": async (step) => {
    const { openRegistry } = await import("./release-artifacts.ts");
    const { fetchProviderFiles } = await import("@nodekit/release");
    const client = await openRegistry({ ...context.registry, redactor });
    const reference = String(step.params?.reference);
    const files = await fetchProviderFiles(client, { reference, digest: String(step.params?.digest) });
    const wanted = (step.params?.files ?? []) as string[];
    const lacking = wanted.filter((name) => !files.has(name));
    if (lacking.length > 0) {
      throw new UserError(
        errorCodes.RELEASE_INCOMPLETE_FOR_INSTALL,
        `the provider components ${reference}@${String(step.params?.digest)} lack ${lacking.join(", ")}`,
        { why: "clusterctl needs the components and metadata.yaml of each provider" },
      );
    }
    const dir = String(step.params?.dir);
    await ensurePrivateDir(dir, { mode: 0o700, what: WORK_DIR });
    for (const name of wanted) {
      await writeFileSafe(join(dir, name), files.get(name) ?? new Uint8Array(), {
        mode: 0o600,
        what: "a provider components file",
      });
    }
  },
  // Written by runInstall around the plan (the password is in no step); here it must be in place.
  "helm-registry-config": async (step) => {
    const path = String(step.params?.path);
    const present = await stat(path).then(
      (info) => info.isFile(),
      () => false,
    );
    if (!present) throw new BugError(`the generated helm registry config ${path} is missing`);
  },
  // What was observed before planning; nothing is left to do when the plan runs.
  observed: async () => {},
  "write-file": async (step) => {
    const path = String(step.params?.path);
    await ensurePrivateDir(dirname(path), { mode: 0o700, what: WORK_DIR });
    await writeFileSafe(path, String(step.params?.content), { mode: 0o600, what: "the rendered file" });
  },
});

/** Checks, before anything runs, that clusterctl will find every file it needs in the provider repository. */
async function checkProviderRepository(context: InstallContext, plan: Plan): Promise<void> {
  const clusterApi = plan.items.find((item) => item.id === "cluster-api");
  if (clusterApi === undefined || clusterApi.steps.length === 0) return;
  const missing: string[] = [];
  // With a release, the providers' files are pulled by the plan itself; only cert-manager's must be there.
  const pulled = context.release === undefined ? undefined : providerDirectory(context);
  for (const file of repositoryFiles(context).filter((f) => pulled === undefined || !f.startsWith(pulled))) {
    const found = await stat(file).then(
      (info) => info.isFile(),
      () => false,
    );
    if (!found) missing.push(file);
  }
  if (missing.length > 0) {
    throw new UserError(
      errorCodes.PROVIDER_REPOSITORY_INCOMPLETE,
      `the provider repository ${providerRepository(context)} lacks ${missing.length} file${missing.length === 1 ? "" : "s"} clusterctl needs`,
      {
        why: `missing: ${missing.join(", ")}`,
        next: "lay out each provider as {provider-label}/{version}/{components, metadata.yaml}, and cert-manager as cert-manager/{version}/cert-manager.yaml",
        facts: { repository: providerRepository(context) },
      },
    );
  }
}

export interface RunInstallOptions {
  runner: ProcessRunner;
  fromItem?: string | undefined;
  onEvent?: Parameters<typeof runPlan>[1]["onEvent"];
  redactor: Redactor;
  /** How the generated helm registry config is removed if the process ends mid-run (default: on exit and signals). */
  registryConfigHooks?: RegistryConfigHooks;
}

/**
 * What a run checks before its first change, and a dry run checks the same way: the item to
 * start from exists (PLAN_ITEM_UNKNOWN), and clusterctl will find every file it needs.
 */
export async function preflightInstall(context: InstallContext, plan: Plan, fromItem?: string): Promise<void> {
  // Only what runs is checked: the items before --from-item have no steps in planFrom's plan.
  await checkProviderRepository(context, planFrom(plan, fromItem));
}

/** Executes exactly the plan the dry run prints, item by item; stops at the first failure, naming item and call. */
export async function runInstall(context: InstallContext, plan: Plan, options: RunInstallOptions) {
  await removeLeftoverRegistryConfig(context.workDir);
  await preflightInstall(context, plan, options.fromItem);
  const login = context.release?.helmRegistryLogin;
  if (login === undefined) return runPlanned(context, plan, options);
  return withHelmRegistryConfig(login, () => runPlanned(context, plan, options), options.registryConfigHooks);
}

function runPlanned(context: InstallContext, plan: Plan, options: RunInstallOptions) {
  return runPlan(plan, {
    runner: options.runner,
    actions: installActions(context, options.redactor),
    fromItem: options.fromItem,
    redactor: options.redactor,
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
    // "installing nvke-controller runs helm", not "running helm runs helm".
    describeFailure: (error, step, item) =>
      kubeToolError(error, step.call, where(context.target.kubeconfig, `installing ${item.id}`)),
  });
}

export interface InstallOptions {
  inputs: InstallInputs;
  /** Runs the read-only observations (both modes) and, in a real run, the plan. */
  runner: ProcessRunner;
  dryRun: boolean;
  fromItem?: string | undefined;
  onEvent?: RunInstallOptions["onEvent"];
}

/** `nvkectl install`: read, observe, plan; then print (dry run) or execute that same plan. */
export async function install(options: InstallOptions): Promise<{ plan: Plan; ran: readonly string[] }> {
  const context = await prepareInstall(options.inputs, options.runner);
  const plan = planInstall(context);
  // The dry run runs every check the run makes, and shows the plan as --from-item runs it.
  await preflightInstall(context, plan, options.fromItem);
  if (options.dryRun) return { plan: planFrom(plan, options.fromItem), ran: [] };
  const result = await runInstall(context, plan, {
    runner: options.runner,
    fromItem: options.fromItem,
    onEvent: options.onEvent,
    redactor: options.inputs.redactor,
  });
  return { plan, ran: result.ran };
}

/**
 * What `upgrade plan` compares the site's record with: what the install would record for
 * these inputs (no cluster is asked), and each provider's metadata.yaml release series, by
 * which its contract at a version is known: from the provider repository (a newer
 * metadata.yaml lists the older series too), and with a release, from the components the
 * release carries.
 */
export async function upgradeTarget(
  inputs: InstallInputs,
): Promise<{ content: RecordContent; releaseSeries: ReadonlyMap<string, unknown[]> }> {
  const documents = await readDocuments(inputs);
  const content = await recordContent(documents, inputs, inventoryOf(documents));
  const repository = providerRepository(documents);
  const series = new Map<string, unknown[]>();
  const add = (key: string, text: string) => {
    const parsed = load(text) as { releaseSeries?: unknown[] } | undefined;
    if (Array.isArray(parsed?.releaseSeries)) series.set(key, [...(series.get(key) ?? []), ...parsed.releaseSeries]);
  };
  const providers = providersOf(documents.deployPath, documents.release);
  for (const p of providers) {
    const versions = await readdir(join(repository, p.label)).catch(() => [] as string[]);
    for (const version of versions) {
      const text = await readFile(join(repository, p.label, version, "metadata.yaml"), "utf8").catch(() => undefined);
      if (text !== undefined) add(`${p.type}/${p.name}`, text);
    }
  }
  const pulled = providers.filter((p) => p.artifact !== undefined);
  if (pulled.length > 0) {
    const { openRegistry } = await import("./release-artifacts.ts");
    const { fetchProviderFiles } = await import("@nodekit/release");
    const client = await openRegistry({
      ...inputs.registry,
      env: inputs.env ?? process.env,
      redactor: inputs.redactor,
    });
    for (const p of pulled) {
      if (p.artifact === undefined) continue;
      const files = await fetchProviderFiles(client, p.artifact);
      const metadata = files.get("metadata.yaml");
      if (metadata !== undefined) add(`${p.type}/${p.name}`, new TextDecoder().decode(metadata));
    }
  }
  return { content, releaseSeries: series };
}
