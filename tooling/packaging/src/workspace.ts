import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

// The workspace's packages as a release sees them: every package.json under packages/, apps/
// and tooling/ (pnpm-workspace.yaml's globs), the public ones (no "private": true) being what
// is packed and published.

export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
  engines?: Record<string, string>;
  files?: string[];
  bin?: Record<string, string>;
  [field: string]: unknown;
}

export interface WorkspacePackage {
  /** The package's directory (absolute). */
  dir: string;
  manifest: Manifest;
}

const GROUPS = ["packages", "apps", "tooling"];

/** Every workspace package, sorted by name. */
export async function workspacePackages(root: string): Promise<WorkspacePackage[]> {
  const found: WorkspacePackage[] = [];
  for (const group of GROUPS) {
    for (const entry of await readdir(join(root, group), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const dir = join(root, group, entry.name);
      const text = await readFile(join(dir, "package.json"), "utf8").catch(() => undefined);
      if (text !== undefined) found.push({ dir, manifest: JSON.parse(text) as Manifest });
    }
  }
  return found.sort((a, b) => a.manifest.name.localeCompare(b.manifest.name));
}

/** The packages a release publishes: those not marked private. */
export async function publicPackages(root: string): Promise<WorkspacePackage[]> {
  return (await workspacePackages(root)).filter((pkg) => pkg.manifest.private !== true);
}
