import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { readDeployPath } from "@nodekit/deploy-path";
import { parseSiteSpec } from "@nodekit/sitespec";
import { parseStackConfig } from "@nodekit/stack-config";
import { repoRoot } from "@nodekit/test-utils";
import type { InstallContext } from "../src/services/install.ts";
import { recordedItems } from "../src/services/install-record.ts";

/** examples/stack.yaml with every REPLACE_* filled in; `edit` changes the text before it is parsed. */
async function shippedStackConfig(edit: (text: string) => string = (text) => text) {
  const filled = (await readFile(join(repoRoot, "examples/stack.yaml"), "utf8")).replace(
    /REPLACE_[A-Z_]+/g,
    (placeholder) =>
      ({
        REPLACE_NICO_API_ENDPOINT: "https://nico.example.net/api",
        REPLACE_PROFILES_IMAGE: "registry.example.net/nvke/profiles:v1",
        REPLACE_PROVIDER_REPOSITORY_DIR: "/srv/providers",
      })[placeholder] ?? "filled",
  );
  const parsed = parseStackConfig(edit(filled), { source: "stack.yaml" });
  if (parsed.config === undefined) throw new Error(`the stack config does not validate: ${JSON.stringify(parsed)}`);
  return parsed.config;
}

/**
 * The install's context for the shipped examples and deploy/nico, as prepareInstall would
 * read it on a site of 4 amd64 nodes with these Cluster API providers installed (pure: no
 * cluster is asked). `overrides` replaces any part of it.
 */
export async function shippedContext(
  providers: Record<string, string> = {},
  overrides: Partial<InstallContext> = {},
): Promise<InstallContext> {
  const site = parseSiteSpec(await readFile(join(repoRoot, "examples/sitespec.yaml"), "utf8"), { source: "s" }).spec;
  if (site === undefined) throw new Error("examples/sitespec.yaml does not validate");
  const deployPath = await readDeployPath(join(repoRoot, "deploy/nico"));
  return {
    site,
    stack: await shippedStackConfig(),
    stackDir: "/srv",
    deployPath,
    target: { kubeconfig: "/srv/my-tier0-site.kubeconfig" },
    workDir: "/srv/state",
    nicoApiKey: "k3y-not-printed",
    observations: { architecture: "amd64", nodes: 4, providers },
    record: {
      installedAt: "2026-12-01T10:00:00.000Z",
      site: site.metadata.name,
      deployPath: deployPath.name,
      items: await recordedItems(deployPath),
      providers: [],
      certManager: "v1.19.1",
      namespaces: [],
      crds: [],
      stackConfigSha256: `sha256:${"0".repeat(64)}`,
      objects: [],
    },
    ...overrides,
  };
}
