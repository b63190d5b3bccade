import { cp, mkdir, readFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { join, relative } from "node:path";
import { MINIMUM_NODE } from "@nodekit/cli-kit";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { publicPackages, workspacePackages } from "../src/workspace.ts";

// What each published package.json says, checked against what the package is: the CLIs'
// dependencies against what their bundles load, the engines against the launcher's check,
// the licence and repository, and the changesets against `changeset status` and `version`.

/** Imports a bundle may make that need nothing installed: oclif's TypeScript loaders (development only) and an optional one of @sigstore/sign's. */
const OPTIONAL = new Set(["typescript", "ts-node", "tsx", "kerberos"]);

interface Metafile {
  outputs: Record<string, { imports?: Array<{ path: string; external?: boolean }> }>;
}

async function bundleExternals(app: string): Promise<string[]> {
  const meta = JSON.parse(await readFile(join(repoRoot, app, "dist/metafile-esm.json"), "utf8")) as Metafile;
  const names = new Set<string>();
  for (const output of Object.values(meta.outputs)) {
    for (const imported of output.imports ?? []) {
      if (!imported.external || isBuiltin(imported.path) || OPTIONAL.has(imported.path)) continue;
      const parts = imported.path.split("/");
      names.add(imported.path.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? imported.path));
    }
  }
  return [...names];
}

describe("the CLIs declare what their bundles load, and nothing they bundle", () => {
  for (const app of ["apps/nvkectl", "apps/nr"]) {
    it(app, async () => {
      const manifest = JSON.parse(await readFile(join(repoRoot, app, "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
        oclif: { plugins: string[] };
      };
      const loaded = [...(await bundleExternals(app)), ...manifest.oclif.plugins];
      expect(Object.keys(manifest.dependencies).sort()).toEqual([...new Set(loaded)].sort());
    });
  }
});

describe("every public package", async () => {
  const packages = await publicPackages(repoRoot);
  const license = await readFile(join(repoRoot, "LICENSE"), "utf8");
  const rootRepository = (
    JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { repository: { url: string } }
  ).repository;

  it("is found (the two CLIs and the libraries)", () => {
    expect(packages.map((pkg) => pkg.manifest.name)).toEqual(
      expect.arrayContaining(["@nodekit/nvkectl", "@nodekit/nr"]),
    );
    expect(packages.length).toBeGreaterThan(10);
  });

  for (const pkg of packages) {
    it(`${pkg.manifest.name}: engines as the launcher checks, Apache-2.0 with its LICENSE, repository`, async () => {
      expect(pkg.manifest.engines?.node).toBe(`>=${MINIMUM_NODE}`);
      expect(pkg.manifest.license).toBe("Apache-2.0");
      expect(await readFile(join(pkg.dir, "LICENSE"), "utf8")).toBe(license);
      // One repository, named as the root names it (an owner/repo URL, no placeholder), and the package's directory in it.
      expect(pkg.manifest.repository).toEqual({
        type: "git",
        url: rootRepository.url,
        directory: relative(repoRoot, pkg.dir),
      });
      // No workspace library among a CLI's dependencies: a CLI bundles them.
      if (pkg.manifest.bin !== undefined) {
        expect(Object.keys(pkg.manifest.dependencies ?? {}).filter((name) => name.startsWith("@nodekit/"))).toEqual([]);
      }
    });
  }

  it("the root names the repository as git+https://HOST/OWNER/REPO.git", () => {
    expect(rootRepository.url).toMatch(/^git\+https:\/\/[a-z0-9.-]+\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+\.git$/);
  });

  it("the root's engines agree", async () => {
    const root = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { engines: { node: string } };
    expect(root.engines.node).toBe(`>=${MINIMUM_NODE}`);
  });
});

describe("the libraries carry only what they use", async () => {
  const packages = await workspacePackages(repoRoot);
  const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg.manifest]));
  /** Every package an install of `name` brings, as far as the workspace knows them (its own libraries' dependencies, transitively). */
  const closure = (name: string, seen = new Set<string>()): Set<string> => {
    for (const dependency of Object.keys(byName.get(name)?.dependencies ?? {})) {
      if (seen.has(dependency)) continue;
      seen.add(dependency);
      if (byName.has(dependency)) closure(dependency, seen);
    }
    return seen;
  };

  // They build kubectl, helm and clusterctl calls and check a kubeconfig path; the client
  // library (62 MB installed) is @nodekit/kube's, for what talks to the API itself.
  for (const name of ["@nodekit/deploy-path", "@nodekit/site-config", "@nodekit/kube-calls"]) {
    it(`${name} installs no @kubernetes/client-node`, () => {
      expect(byName.has(name)).toBe(true);
      expect([...closure(name)]).not.toContain("@kubernetes/client-node");
    });
  }

  it("@nodekit/kube still brings the client (the check above is not vacuous)", () => {
    expect([...closure("@nodekit/kube")]).toContain("@kubernetes/client-node");
  });
});

describe("changesets", () => {
  const changeset = join(repoRoot, "node_modules/.bin/changeset");

  it("changeset status passes (no changeset mixes a private package with a public one)", async () => {
    const result = await execa(changeset, ["status"], { cwd: repoRoot, reject: false });
    expect(result.stderr + result.stdout).not.toMatch(/Error: |Mixed changesets/);
    expect(result.exitCode).toBe(0);
  }, 120_000);

  it("changeset version passes, on a copy of the workspace's manifests and changesets", async () => {
    const dir = await tempDir("changeset-version-");
    try {
      for (const file of ["package.json", "pnpm-workspace.yaml", ".changeset"]) {
        await cp(join(repoRoot, file), join(dir.path, file), { recursive: true });
      }
      for (const pkg of await workspacePackages(repoRoot)) {
        const to = join(dir.path, relative(repoRoot, pkg.dir));
        await mkdir(to, { recursive: true });
        await cp(join(pkg.dir, "package.json"), join(to, "package.json"));
      }
      const result = await execa(changeset, ["version"], { cwd: dir.path, reject: false });
      expect(result.stderr).not.toMatch(/Error: /);
      expect(result.exitCode).toBe(0);
      const nvkectl = JSON.parse(await readFile(join(dir.path, "apps/nvkectl/package.json"), "utf8"));
      expect(nvkectl.version).not.toBe("0.1.0");
      await expect(readFile(join(dir.path, "apps/nvkectl/CHANGELOG.md"), "utf8")).resolves.toContain(
        "@nodekit/nvkectl",
      );
    } finally {
      await dir.cleanup();
    }
  }, 120_000);
});
