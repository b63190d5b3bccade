import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { providerKey } from "@nodekit/deploy-path";
import { load } from "js-yaml";
import type { RecordContent } from "../install-record.ts";
import { providerRepository, providersOf } from "./cluster-api.ts";
import type { InstallInputs } from "./context.ts";
import { readDocuments } from "./documents.ts";
import { inventoryOf } from "./objects.ts";
import { recordContent } from "./prepare.ts";

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
      if (text !== undefined) add(providerKey(p), text);
    }
  }
  const pulled = providers.filter((p) => p.artifact !== undefined);
  if (pulled.length > 0) {
    const { openRegistry } = await import("../release-artifacts.ts");
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
      if (metadata !== undefined) add(providerKey(p), new TextDecoder().decode(metadata));
    }
  }
  return { content, releaseSeries: series };
}
