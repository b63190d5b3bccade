import { createPrivateKey } from "node:crypto";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  clusterctlVersion,
  clusterScopedKinds,
  type FluxArtifact,
  type FluxItem,
  type FluxTreeOptions,
  fluxManifests,
  fluxObjects,
  inNamespace,
  ociLayoutFiles,
  type PushedFluxArtifact,
  packFluxArtifact,
  pushFluxArtifacts,
  type RenderedObject,
  secretsIn,
} from "@nodekit/deploy-path";
import { BugError, UserError } from "@nodekit/errors";
import { writeFileSafe } from "@nodekit/fs-safe";
import { isolatedToolEnv, kubeToolError } from "@nodekit/kube";
import type { ExecStep, Plan, PlanItem } from "@nodekit/plan";
import { type CommandCall, CommandFailedError, type ProcessRunner, type Redactor } from "@nodekit/process";
import { dump, loadAll } from "js-yaml";
import { errorCodes } from "../../errors.ts";
import { withHelmRegistryConfig } from "../install-registry-login.ts";
import { openRegistry, type RegistryAccess } from "../release-artifacts.ts";
import { providerRepository, providersOf } from "./cluster-api.ts";
import type { InstallContext, InstallInputs } from "./context.ts";
import { renderOwnObjects } from "./objects.ts";
import { planInstall } from "./plan.ts";
import { prepareInstall } from "./prepare.ts";
import { installActions, preflightInstall } from "./run.ts";
import { spirePatch } from "./steps.ts";

/**
 * `nvkectl install --emit flux DIR`: the install's plan, rendered instead of applied, as Flux
 * objects (@nodekit/deploy-path's fluxObjects) over one OCI artifact per item, written as an
 * OCI image layout. The same reads and checks as the install; nothing on the cluster changes.
 */

export interface FluxEmitOptions {
  inputs: InstallInputs;
  runner: ProcessRunner;
  /** The directory the tree is written to. */
  dir: string;
  dryRun: boolean;
  /** `oci://host/path` the operator pushes the artifacts to; item `x` at `${repository}/x`. */
  repository: string;
  /** Verification each OCIRepository asks of its artifact: cosign with the public keys in Secret `secret`, or none. */
  verify: { provider: "cosign"; secret: string } | undefined;
  insecure: boolean;
  /** A docker-registry Secret in Flux's namespace with the registry's pull credentials (OCIRepository spec.secretRef). */
  pullSecret?: string | undefined;
  /**
   * Push each artifact by digest to `repository` after writing the tree, signed (cosign's
   * classic signature, what source-controller verifies with a public key) with the private key
   * in `signingKeyFile` when given. The key is read from the file and never printed.
   */
  push?: { access: RegistryAccess; signingKeyFile?: string | undefined } | undefined;
  /** Flux's namespace (default flux-system) and the objects' name prefix (default nvke-). */
  namespace?: string;
  prefix?: string;
  interval?: string;
}

export interface TreeFile {
  /** Relative to the tree's directory. */
  path: string;
  bytes: Uint8Array;
}

export interface FluxEmitResult {
  items: readonly FluxItem[];
  artifacts: readonly FluxArtifact[];
  objects: readonly RenderedObject[];
  files: readonly TreeFile[];
  /** The Secrets the tree references and the operator creates (never in the tree). */
  secrets: readonly string[];
  architecture: string;
  /** What was pushed (with push): each artifact's reference by digest and its signature's tag. */
  pushed: readonly PushedFluxArtifact[];
}

/** The Kustomization timeout of the items the install waits on with clusterctl (its --wait-provider-timeout 600). */
const CLUSTER_API_TIMEOUT = "10m";
const OWN_ITEM_TIMEOUT = "5m";
/** Where an emitted tree keeps its Flux objects and its artifacts. */
const FLUX_DIR = "flux";
export const OCI_DIR = "oci";

/** `helm upgrade --install … --wait --timeout T` → `helm template …` with the same chart, namespace, values and registry flags. */
export function templateCall(call: CommandCall): CommandCall {
  const [verb, install, ...rest] = call.args;
  if (call.command !== "helm" || verb !== "upgrade" || install !== "--install") {
    throw new BugError(`not a helm upgrade --install call: ${call.command} ${call.args.join(" ")}`);
  }
  const args: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? "";
    if (arg === "--wait" || arg === "--create-namespace") continue;
    if (arg === "--timeout") {
      i++;
      continue;
    }
    args.push(arg);
  }
  // helm install applies a chart's crds/ and runs no test hooks; helm template shows crds/ only when asked.
  return { ...call, args: ["template", ...args, "--include-crds", "--skip-tests"] };
}

const isObject = (value: unknown): value is RenderedObject => {
  const o = value as Partial<RenderedObject> | null;
  return (
    typeof o === "object" &&
    o !== null &&
    typeof o.apiVersion === "string" &&
    typeof o.kind === "string" &&
    typeof o.metadata?.name === "string"
  );
};

function parseObjects(text: string, source: string): RenderedObject[] {
  const documents = loadAll(text).filter((d) => d !== null && d !== undefined);
  const bad = documents.findIndex((d) => !isObject(d));
  if (bad !== -1) {
    throw new UserError(
      errorCodes.FLUX_EMIT_RENDER_FAILED,
      `${source}: document ${bad + 1} is not a Kubernetes object`,
      {
        why: "each rendered document needs apiVersion, kind and metadata.name to be applied by Flux",
        facts: { source },
      },
    );
  }
  return documents as RenderedObject[];
}

const namespaceObject = (name: string): RenderedObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

export interface Rendered {
  /** `cluster-api`'s: cert-manager's file and each provider's components, as clusterctl generates them. */
  certManager: RenderedObject[];
  clusterApi: RenderedObject[];
  /** Each deploy path item's objects. */
  items: Map<string, RenderedObject[]>;
}

/** Runs what the plan renders into the work dir (values files, clusterctl's configuration, a release's components), then renders each item. */
async function render(context: InstallContext, plan: Plan, runner: ProcessRunner, redactor: Redactor) {
  const actions = installActions(context, redactor);
  const failure = (item: PlanItem, call: CommandCall) => (error: unknown) => {
    if (!(error instanceof CommandFailedError)) throw error;
    throw kubeToolError(error, call, {
      doing: `rendering ${item.id} for Flux`,
      kubeconfig: context.target.kubeconfig,
      cluster: "the site cluster",
    });
  };
  const rendered: Rendered = { certManager: [], clusterApi: [], items: new Map() };
  const deployItems = new Map(context.deployPath.items.map((item) => [item.name, item]));
  for (const item of plan.items) {
    if (item.id === "prune" || item.id === "node-architecture") continue;
    for (const step of item.steps) {
      if (step.kind !== "action" || step.action === "observed") continue;
      const handler = actions[step.action];
      if (handler === undefined) throw new BugError(`no handler for the install's action ${step.action}`);
      await handler(step, item);
    }
    const source = deployItems.get(item.id);
    if (source?.kind === "chart") {
      const step = item.steps.find((s): s is ExecStep => s.kind === "exec" && s.call.command === "helm");
      if (step === undefined) throw new BugError(`chart item ${item.id} has no helm call`);
      const call = templateCall(step.call);
      const result = await runner.run(call).catch(failure(item, call));
      const objects = parseObjects(result.stdout, `helm template of ${item.id}`);
      const namespace = source.namespace ?? "default";
      // helm upgrade --install --create-namespace creates the release's namespace.
      rendered.items.set(item.id, [namespaceObject(namespace), ...objects]);
    } else if (source?.kind === "manifests") {
      const objects: RenderedObject[] = [];
      for (const file of source.files) objects.push(...parseObjects(await readFile(file, "utf8"), file));
      rendered.items.set(item.id, objects);
    }
  }
  const pins = context.deployPath.clusterAPI;
  if (pins === undefined) throw new BugError("the deploy path pins no Cluster API (readDocuments refuses it)");
  const certManager = join(
    providerRepository(context),
    "cert-manager",
    clusterctlVersion(pins.certManager),
    "cert-manager.yaml",
  );
  rendered.certManager = parseObjects(await readFile(certManager, "utf8"), certManager);
  const toolEnv = isolatedToolEnv(join(context.workDir, "home"));
  const configFile = join(context.workDir, "clusterctl.yaml");
  const clusterApiItem = plan.items.find((item) => item.id === "cluster-api");
  for (const p of providersOf(context.deployPath, context.release)) {
    const call: CommandCall = {
      command: "clusterctl",
      args: ["generate", "provider", p.flag, `${p.name}:${p.version}`, "--config", configFile],
      env: toolEnv,
    };
    const result = await runner
      .run(call)
      .catch(failure(clusterApiItem ?? { id: "cluster-api", title: "", steps: [] }, call));
    rendered.clusterApi.push(...parseObjects(result.stdout, `clusterctl generate provider ${p.flag} ${p.name}`));
  }
  return rendered;
}

/**
 * The SPIRE patch as a Kustomization applies it: kustomize takes a strategic merge patch only
 * as a whole object (apiVersion, kind, metadata.name), even with a target; without them
 * kustomize-controller fails the build ("trouble configuring builtin PatchTransformer").
 */
function fluxSpirePatch(controller: { namespace: string; name: string }): string {
  return JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: controller.name, namespace: controller.namespace },
    ...JSON.parse(spirePatch("manager")),
  });
}

/**
 * The tree's items, in the install's order, with the dependencies that order stands for:
 * a deploy path item depends on what its `dependsOn` names; cert-manager comes before
 * Cluster API, whose Kustomization carries the SPIRE patch of its controllers (they mount the
 * SPIFFE CSI driver's socket, so they become ready once the SPIRE item runs; no item waits
 * for them but the NICo credentials, whose NicoIdentity is a type the NICo provider defines);
 * the client-networks NetworkPolicy comes after the controller item. No Secret: the NICo key's
 * Secrets are referenced, and the operator creates them (docs/gitops.md).
 */
export function fluxItems(context: InstallContext, rendered: Rendered): FluxItem[] {
  const own = renderOwnObjects(context);
  const all = [
    ...rendered.certManager,
    ...rendered.clusterApi,
    own.storageClass,
    ...[...rendered.items.values()].flat(),
  ] as RenderedObject[];
  const clusterScoped = clusterScopedKinds(all);
  const place = (objects: readonly RenderedObject[], namespace: string | undefined) =>
    objects.map((o) => inNamespace(o, namespace, clusterScoped));
  const providers = providersOf(context.deployPath, context.release);
  const controller = context.deployPath.items.find((item) => item.stackValues);
  const credentials = (own.credentials as RenderedObject[]).filter((o) => o.kind !== "Secret");
  const pins = context.deployPath.clusterAPI;
  const items: FluxItem[] = [
    {
      name: "cert-manager",
      title: `cert-manager ${clusterctlVersion(pins?.certManager ?? "")} (clusterctl's cert-manager.yaml)`,
      dependsOn: [],
      timeout: CLUSTER_API_TIMEOUT,
      objects: rendered.certManager,
    },
    {
      name: "cluster-api",
      title: `Cluster API ${clusterctlVersion(pins?.version ?? "")} (clusterctl generate provider), patched for SPIRE`,
      dependsOn: ["cert-manager"],
      timeout: CLUSTER_API_TIMEOUT,
      objects: rendered.clusterApi,
      patches: providers.map((p) => ({
        target: { group: "apps", version: "v1", kind: "Deployment", ...p.controller },
        patch: fluxSpirePatch(p.controller),
      })),
    },
    {
      name: "storage-class",
      title: `the lab StorageClass ${context.stack.storageClass.name}`,
      dependsOn: [],
      timeout: OWN_ITEM_TIMEOUT,
      objects: [own.storageClass as RenderedObject],
    },
    {
      name: "nico-credentials",
      title: "the NICo credentials' namespace and NicoIdentity (the Secrets are the operator's)",
      dependsOn: credentials.some((o) => o.kind !== "Namespace") ? ["cluster-api"] : [],
      timeout: OWN_ITEM_TIMEOUT,
      objects: credentials,
    },
    ...context.deployPath.items.map(
      (item): FluxItem => ({
        name: item.name,
        title:
          item.kind === "chart"
            ? `chart ${item.pin.chart} ${item.pin.version} as release ${item.release}`
            : `manifests from ${item.displayDir}`,
        dependsOn: [...item.dependsOn],
        timeout: item.timeout,
        objects: place(rendered.items.get(item.name) ?? [], item.namespace ?? "default"),
      }),
    ),
    ...(own.policy === undefined
      ? []
      : [
          {
            name: "client-networks",
            title: `the NetworkPolicy admitting ${context.stack.clientNetworks.join(", ")} to the controller API`,
            dependsOn: controller === undefined ? [] : [controller.name],
            timeout: OWN_ITEM_TIMEOUT,
            objects: [own.policy as RenderedObject],
          },
        ]),
  ];
  return items;
}

/** The NICo key's Secrets, which the items reference and the operator creates (`namespace/name`). */
export function nicoKeySecrets(context: InstallContext): string[] {
  return (renderOwnObjects(context).credentials as RenderedObject[])
    .filter((o) => o.kind === "Secret")
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
}

/** The Secrets the tree's objects reference and the operator creates: the NICo key's, and the verification keys'. */
function referencedSecrets(context: InstallContext, options: FluxEmitOptions): string[] {
  const namespace = options.namespace ?? "flux-system";
  const verify = options.verify === undefined ? [] : [`${namespace}/${options.verify.secret}`];
  const pull = options.pullSecret === undefined ? [] : [`${namespace}/${options.pullSecret}`];
  return [...nicoKeySecrets(context), ...verify, ...pull];
}

export interface EmitRendered {
  context: InstallContext;
  items: FluxItem[];
  /** `org.opencontainers.image.source` and `.revision` of the artifacts. */
  source: string;
  revision: string;
}

/**
 * What every `--emit` shares: reads and observes as the install does, plans it as on a fresh
 * site, renders every item, and refuses items that hold a Secret.
 */
export async function renderEmitItems(inputs: InstallInputs, runner: ProcessRunner): Promise<EmitRendered> {
  const observed = await prepareInstall(inputs, runner);
  // The tree installs everything, whatever this cluster has now: planned as on a fresh site (the engine prunes).
  const { prune: _prune, ...observations } = observed.observations;
  const context: InstallContext = { ...observed, observations: { ...observations, providers: {} } };
  const plan = planInstall(context);
  await preflightInstall(context, plan);
  const login = context.release?.helmRegistryLogin;
  const run = () => render(context, plan, runner, inputs.redactor);
  const rendered = login === undefined ? await run() : await withHelmRegistryConfig(login, run);
  const items = fluxItems(context, rendered);
  const leaked = secretsIn(items.flatMap((item) => item.objects));
  if (leaked.length > 0) {
    throw new UserError(errorCodes.FLUX_TREE_HOLDS_SECRET, `the rendered items hold Secrets: ${leaked.join(", ")}`, {
      why: "the emitted tree is meant to be committed or pushed, so it may hold no Secret",
      next: "turn the Secret off in the item's overlay.yaml and create it on the site yourself (docs/gitops.md)",
      facts: { secrets: leaked.length },
    });
  }
  return {
    context,
    items,
    source: `nvkectl://${context.site.metadata.name}/${context.deployPath.name}`,
    revision: context.release?.release.metadata.version ?? context.deployPath.name,
  };
}

/** Reads and observes as the install does, renders every item, and packs the tree (written unless a dry run). */
export async function emitFlux(options: FluxEmitOptions): Promise<FluxEmitResult> {
  const { context, items, source, revision } = await renderEmitItems(options.inputs, options.runner);
  const artifacts: FluxArtifact[] = [];
  for (const item of items) {
    artifacts.push(
      await packFluxArtifact({
        item: item.name,
        files: { "manifests.yaml": fluxManifests(item) },
        source,
        revision,
        created: "1970-01-01T00:00:00Z",
      }),
    );
  }
  const treeOptions: FluxTreeOptions = {
    namespace: options.namespace ?? "flux-system",
    prefix: options.prefix ?? "nvke-",
    repository: options.repository,
    interval: options.interval ?? "10m",
    verify: options.verify === undefined ? undefined : { provider: "cosign", secretRef: options.verify.secret },
    insecure: options.insecure,
    pullSecret: options.pullSecret,
  };
  const objects = fluxObjects(items, artifacts, treeOptions);
  const files = treeFiles(items, objects, artifacts);
  // The key is read (and checked) before anything is written or pushed.
  const signingKeyPem =
    options.push?.signingKeyFile === undefined ? undefined : await readSigningKey(options.push.signingKeyFile);
  if (!options.dryRun) await writeTree(options.dir, files, FLUX_DIR);
  const pushed =
    options.dryRun || options.push === undefined
      ? []
      : await pushFluxArtifacts(await openRegistry(options.push.access), {
          repository: options.repository,
          artifacts,
          ...(signingKeyPem === undefined ? {} : { signingKeyPem }),
        });
  return {
    pushed,
    items,
    artifacts,
    objects,
    files,
    secrets: referencedSecrets(context, options),
    architecture: context.observations.architecture,
  };
}

/** The signing key's PEM, checked to be an unencrypted ECDSA P-256 private key; its text is never in a message. */
async function readSigningKey(file: string): Promise<string> {
  const unusable = (why: string) =>
    new UserError(errorCodes.FLUX_SIGN_KEY_UNUSABLE, `--flux-sign-key ${file} is not a usable signing key`, {
      why,
      next: "name the release's signing key: an unencrypted PEM ECDSA P-256 private key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 makes one)",
      facts: { path: file },
    });
  let pem: string;
  try {
    pem = await readFile(file, "utf8");
  } catch (error) {
    throw unusable((error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : "it cannot be read");
  }
  let curve: string | undefined;
  try {
    curve = createPrivateKey(pem).asymmetricKeyDetails?.namedCurve;
  } catch {
    throw unusable("it holds no unencrypted PEM private key");
  }
  if (curve !== "prime256v1") throw unusable(`it is not an ECDSA P-256 key (${curve ?? "not an EC key"})`);
  return pem;
}

/** `flux/<item>.yaml` (its OCIRepository and Kustomization), `flux/kustomization.yaml` listing them, and the OCI layout under `oci/`. */
function treeFiles(
  items: readonly FluxItem[],
  objects: readonly RenderedObject[],
  artifacts: readonly FluxArtifact[],
): TreeFile[] {
  const text = (value: string) => new TextEncoder().encode(value);
  const perItem = items.map((item, index) => ({
    path: join(FLUX_DIR, `${item.name}.yaml`),
    bytes: text(
      objects
        .slice(index * 2, index * 2 + 2)
        .map((o) => dump(o, { lineWidth: -1 }))
        .join("---\n"),
    ),
  }));
  const kustomization = {
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources: items.map((item) => `${item.name}.yaml`),
  };
  return [
    ...perItem,
    { path: join(FLUX_DIR, "kustomization.yaml"), bytes: text(dump(kustomization)) },
    ...[...ociLayoutFiles(artifacts)].map(([path, bytes]) => ({ path: join(OCI_DIR, path), bytes })),
  ];
}

/**
 * Writes the tree: DIR must be empty, missing, or hold an earlier tree of the same engine (its
 * `engineDir`, `flux/` or `argocd/`, and `oci/oci-layout`), which is replaced whole, so no
 * stale artifact stays behind.
 */
export async function writeTree(dir: string, files: readonly TreeFile[], engineDir: string): Promise<void> {
  const entries = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw error;
  });
  const layout: string[] = await readdir(join(dir, OCI_DIR)).catch(() => []);
  const earlier = entries.includes(engineDir) && layout.includes("oci-layout");
  const foreign = entries.filter((name) => name !== engineDir && name !== OCI_DIR);
  if (entries.length > 0 && (!earlier || foreign.length > 0)) {
    const engine = engineDir === FLUX_DIR ? "Flux" : "Argo CD";
    throw new UserError(
      errorCodes.FLUX_EMIT_DIR_NOT_EMPTY,
      `${dir} holds files that are not an emitted ${engine} tree`,
      {
        why: `--emit replaces an earlier tree (${engineDir}/ and ${OCI_DIR}/) and writes nowhere else; found ${[...foreign, ...(earlier ? [] : entries)].slice(0, 5).join(", ")}`,
        next: "name an empty or new directory",
        facts: { path: dir },
      },
    );
  }
  await rm(join(dir, engineDir), { recursive: true, force: true });
  await rm(join(dir, OCI_DIR), { recursive: true, force: true });
  for (const file of files) {
    const path = join(dir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFileSafe(path, file.bytes, { mode: 0o644, what: "a file of the emitted tree" });
  }
}
