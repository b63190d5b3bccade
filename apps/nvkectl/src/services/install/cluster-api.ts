import { stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import {
  type ClusterApiProvider,
  type ClusterApiRepository,
  clusterApiProviders,
  clusterApiRepositoryFiles,
  clusterctlVersion,
  type DeployPath,
  planClusterApi,
  providerKey,
} from "@nodekit/deploy-path";
import { BugError, UserError } from "@nodekit/errors";
import { action, type Plan, type PlanItem } from "@nodekit/plan";
import { errorCodes } from "../../errors.ts";
import type { InstallContext, ReleaseContext, ReleaseProvider } from "./context.ts";
import { writeStep } from "./steps.ts";

/** A provider the install runs clusterctl init for: @nodekit/deploy-path's, and with a release, where it is pulled from. */
export interface Provider extends ClusterApiProvider {
  /** With a release: the OCI artifact its components and metadata.yaml are pulled from. */
  artifact?: ReleaseProvider["components"];
}

/** The providers the deploy path installs; with a release, at the release's versions, from its components. */
export function providersOf(deployPath: DeployPath, release?: ReleaseContext): Provider[] {
  const pinned = deployPath.clusterAPI === undefined ? [] : clusterApiProviders(deployPath.clusterAPI);
  if (release === undefined) return pinned;
  return pinned.map((p) => {
    const found = release.providers.get(providerKey(p));
    return found === undefined ? p : { ...p, version: clusterctlVersion(found.version), artifact: found.components };
  });
}

export function providerRepository(context: Pick<InstallContext, "stack" | "stackDir">): string {
  const configured = context.stack.clusterAPI.providerRepository;
  return isAbsolute(configured) ? configured : resolve(context.stackDir, configured);
}

/** Where clusterctl finds the providers: the stack's repository, or the components pulled from the release. */
function providerDirectory(context: InstallContext): string {
  return context.release === undefined ? providerRepository(context) : join(context.workDir, "release-providers");
}

/** The local repositories clusterctl reads: the providers (pulled ones, with a release) and cert-manager (always the stack's). */
function repositoryOf(context: InstallContext): ClusterApiRepository {
  return { providers: providerDirectory(context), certManager: providerRepository(context) };
}

/** Every file clusterctl will read from the provider repository (and, with a release, from the pulled components). */
function repositoryFiles(context: InstallContext): string[] {
  const pins = context.deployPath.clusterAPI;
  if (pins === undefined) return [];
  return clusterApiRepositoryFiles(pins, providersOf(context.deployPath, context.release), repositoryOf(context));
}

/**
 * clusterctl init for the providers not yet installed, clusterctl upgrade apply for those the
 * context upgrades (@nodekit/deploy-path's planClusterApi), the configuration written first;
 * with a release, their components pulled before, each checked against its digest. Nothing
 * when all are installed at the pinned versions; any other installed at another version is
 * refused (PROVIDER_VERSION_MISMATCH).
 */
export function clusterApiItem(context: InstallContext, toolEnv: Record<string, string>): PlanItem {
  const pins = context.deployPath.clusterAPI;
  if (pins === undefined) throw new BugError("the deploy path pins no Cluster API (readDocuments refuses it)");
  const providers = providersOf(context.deployPath, context.release);
  const configFile = join(context.workDir, "clusterctl.yaml");
  const planned = planClusterApi(pins, {
    target: context.target,
    toolEnv,
    configFile,
    repository: repositoryOf(context),
    providers,
    installed: context.observations.providers,
    ...(context.providerUpgrades === undefined ? {} : { upgrade: context.providerUpgrades }),
  });
  const [refused] = planned.refused;
  if (refused !== undefined) {
    const { provider: p, installed: found } = refused;
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
  if (planned.item.steps.length === 0) return planned.item;
  // With a release, the providers' components are pulled first, each checked against its digest.
  const pulls = [...planned.missing, ...planned.upgrades.map((u) => u.provider)].flatMap((p) => {
    if (p.artifact === undefined) return [];
    const dir = join(providerDirectory(context), p.label, p.version);
    return [
      action(
        "pull-provider",
        `pull ${p.label} ${p.version} (${p.components}, metadata.yaml) from ${p.artifact.reference}@${p.artifact.digest} into ${dir}`,
        {
          mutates: true,
          params: {
            reference: p.artifact.reference,
            digest: p.artifact.digest,
            dir,
            files: [p.components, "metadata.yaml"],
          },
        },
      ),
    ];
  });
  return {
    ...planned.item,
    steps: [
      ...pulls,
      writeStep(configFile, planned.config, "the clusterctl configuration: local provider repositories only"),
      ...planned.item.steps,
    ],
  };
}

/** Checks, before anything runs, that clusterctl will find every file it needs in the provider repository. */
export async function checkProviderRepository(context: InstallContext, plan: Plan): Promise<void> {
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
