import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import type { WorkspacePackage } from "./workspace.ts";

// Packing is pnpm's own `pnpm pack`, as `pnpm publish` (and so `changeset publish`) packs: it
// turns workspace: ranges into versions, runs the package's prepack/postpack (nvkectl's puts the
// shipped deploy path inside the package) and the workspace's beforePacking hook
// (.pnpmfile.cjs: no "source" export condition in a published package.json).

export interface PackedPackage {
  name: string;
  version: string;
  /** The tarball (absolute path). */
  tarball: string;
}

/** Packs each package into `outDir` with `pnpm pack`; pnpm must be on PATH. */
export async function packPackages(packages: readonly WorkspacePackage[], outDir: string): Promise<PackedPackage[]> {
  await mkdir(outDir, { recursive: true });
  const packed: PackedPackage[] = [];
  for (const pkg of packages) {
    const before = new Set(await readdir(outDir));
    await execa("pnpm", ["pack", "--pack-destination", outDir], { cwd: pkg.dir, stdio: ["ignore", "pipe", "pipe"] });
    const made = (await readdir(outDir)).filter((file) => file.endsWith(".tgz") && !before.has(file));
    if (made.length !== 1 || made[0] === undefined) {
      throw new Error(`pnpm pack in ${pkg.dir} made ${made.length} tarballs in ${outDir}, not one`);
    }
    packed.push({ name: pkg.manifest.name, version: pkg.manifest.version, tarball: join(outDir, made[0]) });
  }
  return packed;
}
