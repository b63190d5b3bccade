import { join } from "node:path";
import {
  ARGOCD_APP_OF_APPS,
  ARGOCD_ARTIFACT_MEDIA_TYPES,
  type ArgoCdTreeOptions,
  argoCdApplicationFiles,
  argoCdApplications,
  argoCdAppOfApps,
  argoCdArtifactFiles,
  type FluxArtifact,
  type FluxItem,
  ociLayoutFiles,
  type PushedFluxArtifact,
  packFluxArtifact,
  pushFluxArtifacts,
  type RenderedObject,
} from "@nodekit/deploy-path";
import { UserError } from "@nodekit/errors";
import type { ProcessRunner } from "@nodekit/process";
import { dump } from "js-yaml";
import { errorCodes } from "../../errors.ts";
import { openRegistry, type RegistryAccess } from "../release-artifacts.ts";
import type { InstallInputs } from "./context.ts";
import { nicoKeySecrets, OCI_DIR, renderEmitItems, type TreeFile, writeTree } from "./flux.ts";

/**
 * `nvkectl install --emit argocd DIR`: the install's plan, rendered as `--emit flux` renders it,
 * as Argo CD Applications (@nodekit/deploy-path's argoCdApplications) over one OCI artifact per
 * item, in the OCI image layer type Argo CD's repo-server takes; and the app of apps over them,
 * itself an artifact. The same reads and checks as the install; nothing on the cluster changes.
 */

export interface ArgoCdEmitOptions {
  inputs: InstallInputs;
  runner: ProcessRunner;
  /** The directory the tree is written to. */
  dir: string;
  dryRun: boolean;
  /** `oci://host/path` the operator pushes the artifacts to; item `x` at `${repository}/x`. */
  repository: string;
  /** Push each artifact (the app of apps' too) by digest to `repository` after writing the tree. */
  push?: { access: RegistryAccess } | undefined;
  /** Argo CD's namespace (default argocd), the Applications' name prefix (default nvke-), their AppProject (default default). */
  namespace?: string;
  prefix?: string;
  project?: string;
}

export interface ArgoCdEmitResult {
  items: readonly FluxItem[];
  /** The items' artifacts, in the items' order, then the app of apps'. */
  artifacts: readonly FluxArtifact[];
  /** The items' Applications, in the items' order. */
  applications: readonly RenderedObject[];
  /** The Application the operator applies: the app of apps. */
  appOfApps: RenderedObject;
  files: readonly TreeFile[];
  /** The Secrets the items reference and the operator creates (never in the tree). */
  secrets: readonly string[];
  architecture: string;
  pushed: readonly PushedFluxArtifact[];
}

/** Where an emitted tree keeps its Argo CD objects (its artifacts under oci/). */
const ARGOCD_DIR = "argocd";
const APPLICATIONS_DIR = "applications";

/** Renders every item as `--emit flux` does, packs Argo CD's artifacts and Applications (written unless a dry run). */
export async function emitArgoCd(options: ArgoCdEmitOptions): Promise<ArgoCdEmitResult> {
  const { context, items, source, revision } = await renderEmitItems(options.inputs, options.runner);
  const clash = items.find((item) => item.name === ARGOCD_APP_OF_APPS);
  if (clash !== undefined) {
    throw new UserError(
      errorCodes.INSTALL_DEPLOY_PATH_UNUSABLE,
      `deploy path item ${JSON.stringify(clash.name)} uses the name of the Argo CD tree's app of apps`,
      {
        why: `--emit argocd pushes the Applications of the items as ${options.repository}/${ARGOCD_APP_OF_APPS}`,
        next: "rename the item in nvke-deploy.yaml",
      },
    );
  }
  const pack = (item: string, files: Record<string, string>) =>
    packFluxArtifact({
      item,
      files,
      source,
      revision,
      created: "1970-01-01T00:00:00Z",
      mediaTypes: ARGOCD_ARTIFACT_MEDIA_TYPES,
    });
  const artifacts: FluxArtifact[] = [];
  for (const item of items) artifacts.push(await pack(item.name, argoCdArtifactFiles(item)));
  const treeOptions: ArgoCdTreeOptions = {
    namespace: options.namespace ?? "argocd",
    prefix: options.prefix ?? "nvke-",
    repository: options.repository,
    project: options.project ?? "default",
    server: "https://kubernetes.default.svc",
  };
  const applications = argoCdApplications(items, artifacts, treeOptions);
  const applicationFiles = argoCdApplicationFiles(applications);
  const appOfAppsArtifact = await pack(ARGOCD_APP_OF_APPS, applicationFiles);
  const appOfApps = argoCdAppOfApps(appOfAppsArtifact.digest, treeOptions);
  const all = [...artifacts, appOfAppsArtifact];
  const text = (value: string) => new TextEncoder().encode(value);
  const files: TreeFile[] = [
    { path: join(ARGOCD_DIR, `${ARGOCD_APP_OF_APPS}.yaml`), bytes: text(dump(appOfApps, { lineWidth: -1 })) },
    ...Object.entries(applicationFiles).map(([name, yaml]) => ({
      path: join(ARGOCD_DIR, APPLICATIONS_DIR, name),
      bytes: text(yaml),
    })),
    ...[...ociLayoutFiles(all)].map(([path, bytes]) => ({ path: join(OCI_DIR, path), bytes })),
  ];
  if (!options.dryRun) await writeTree(options.dir, files, ARGOCD_DIR);
  const pushed =
    options.dryRun || options.push === undefined
      ? []
      : await pushFluxArtifacts(await openRegistry(options.push.access), {
          repository: options.repository,
          artifacts: all,
        });
  return {
    items,
    artifacts: all,
    applications,
    appOfApps,
    files,
    secrets: nicoKeySecrets(context),
    architecture: context.observations.architecture,
    pushed,
  };
}
