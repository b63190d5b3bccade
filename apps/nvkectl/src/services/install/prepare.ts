import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { clusterctlVersion } from "@nodekit/deploy-path";
import type { ProcessRunner } from "@nodekit/process";
import { observePrune } from "../install-prune.ts";
import { nextRecord, type OwnedObject, type RecordContent, recordedItems, sha256 } from "../install-record.ts";
import { checkReleaseContent, pinStackImages } from "../install-release.ts";
import { siteToolTarget } from "../kubectl.ts";
import { providersOf } from "./cluster-api.ts";
import { FIELD_MANAGER, type InstallContext, type InstallInputs } from "./context.ts";
import { type InstallDocuments, readDocuments } from "./documents.ts";
import { createdNamespacesAndCrds, inventoryOf } from "./objects.ts";
import { checkTools, observeArchitecture, observeProviders } from "./observe.ts";
import { chooseImage } from "./values.ts";

/** Reads the documents, then observes the cluster (read-only, in both modes). */
export async function prepareInstall(inputs: InstallInputs, runner: ProcessRunner): Promise<InstallContext> {
  const documents = await readDocuments(inputs);
  const target = await siteToolTarget(inputs);
  // The files first, then the tools, then the cluster.
  await checkTools(runner, documents.deployPath, documents.release);
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

/** What the install record says of this run (install-record.ts): everything but its time. */
export async function recordContent(
  documents: InstallDocuments,
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
    certManager: clusterctlVersion(deployPath.clusterAPI?.certManager ?? ""),
    ...createdNamespacesAndCrds(documents),
    stackConfigSha256: sha256(await readFile(resolve(cwd, inputs.stackConfig))),
    objects,
  };
}
