import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { providerKey } from "@nodekit/deploy-path";
import { load } from "js-yaml";
import type { RecordContent } from "../install-record.ts";
import { type Provider, providerRepository, providersOf } from "./cluster-api.ts";
import type { InstallInputs } from "./context.ts";
import { readDocuments } from "./documents.ts";
import { inventoryOf } from "./objects.ts";
import { recordContent } from "./prepare.ts";

const METADATA = "metadata.yaml";

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
  const repository = providerRepository(documents);
  const series = new Map<string, unknown[]>();
  const add = (key: string, text: string) => {
    const parsed = load(text) as { releaseSeries?: unknown[] } | undefined;
    if (Array.isArray(parsed?.releaseSeries)) series.set(key, [...(series.get(key) ?? []), ...parsed.releaseSeries]);
  };
  const providers = providersOf(documents.deployPath, documents.release);
  // Every read at once (the record's digests, the provider repository's files and the
  // release's metadata.yaml layers, not their components), added in the order the providers
  // and versions are listed.
  const pulled = providers.filter((p) => p.artifact !== undefined);
  const [content, local, remote] = await Promise.all([
    recordContent(documents, inputs, inventoryOf(documents)),
    Promise.all(providers.map((p) => localMetadata(repository, p.label))),
    pulled.length === 0 ? [] : pulledMetadata(inputs, pulled),
  ]);
  providers.forEach((p, i) => {
    for (const text of local[i] ?? []) add(providerKey(p), text);
  });
  pulled.forEach((p, i) => {
    const text = remote[i];
    if (text !== undefined) add(providerKey(p), text);
  });
  return { content, releaseSeries: series };
}

/** Each version's metadata.yaml of a provider in the provider repository, in readdir's order. */
async function localMetadata(repository: string, label: string): Promise<string[]> {
  const versions = await readdir(join(repository, label)).catch(() => [] as string[]);
  const texts = await Promise.all(
    versions.map((version) =>
      readFile(join(repository, label, version, "metadata.yaml"), "utf8").catch(() => undefined),
    ),
  );
  return texts.filter((text): text is string => text !== undefined);
}

/** Each pulled provider's metadata.yaml from the release (that layer alone), all at once. */
async function pulledMetadata(inputs: InstallInputs, pulled: Provider[]): Promise<Array<string | undefined>> {
  const [{ openRegistry }, { fetchProviderFiles }] = await Promise.all([
    import("../release-artifacts.ts"),
    import("@nodekit/release"),
  ]);
  const client = await openRegistry({
    ...inputs.registry,
    env: inputs.env ?? process.env,
    redactor: inputs.redactor,
  });
  return Promise.all(
    pulled.map(async (p) => {
      if (p.artifact === undefined) return undefined;
      const files = await fetchProviderFiles(client, p.artifact, { only: [METADATA] });
      const metadata = files.get(METADATA);
      return metadata === undefined ? undefined : new TextDecoder().decode(metadata);
    }),
  );
}
