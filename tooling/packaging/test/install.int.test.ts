// @runs-long 190 s (a registry, installs from it, the executables): started before the other files, see tooling/testenv/src/sequencer.ts.
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { providerRepository } from "@nodekit/sandbox";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mirrorTarballs, thirdPartyClosure } from "../src/mirror.ts";
import type { PackedPackage } from "../src/pack.ts";
import { NPM_CLI } from "../src/publish.ts";
import { type LocalRegistry, startLocalRegistry } from "../src/registry.ts";
import { publicPackages } from "../src/workspace.ts";

// The install tier: every public package packed as a release packs it (pnpm pack), published
// with npm to a verdaccio on 127.0.0.1 that has no uplinks (its storage seeded with the
// third-party packages this workspace installed, so it serves a whole install and reaches
// nothing else), then installed as a user installs it, in clean prefixes, with npm and with
// pnpm, and run: --version, --help, `nvkectl install --dry-run` with the deploy path the
// package ships, `nr cluster register --dry-run` against the NodeRings emulator.

const CACHE = join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? "/root", ".cache"), "nodekit", "packaging");
const NODE_BIN = join(process.execPath, "..");

let work: string;
let cleanup: () => Promise<void>;
let registry: LocalRegistry;
let packed: PackedPackage[];
const installed: Record<string, { prefix: string; log: string }> = {};

/** A clean environment for a package manager: its own HOME, config naming only our registry, caches in `work`. */
function cleanEnv(home: string): NodeJS.ProcessEnv {
  return {
    HOME: home,
    PATH: `${NODE_BIN}:/usr/bin:/bin`,
    npm_config_userconfig: registry.npmrc,
    npm_config_registry: registry.url,
    npm_config_cache: join(work, "npm-cache"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_CONFIG_HOME: join(home, ".config"),
  };
}

async function npm(args: string[], home: string, cwd = work) {
  await mkdir(home, { recursive: true });
  return execa(process.execPath, [NPM_CLI, ...args], { cwd, env: cleanEnv(home), extendEnv: false, reject: false });
}

/** Installed size in bytes and the number of packages (directories with a package.json under node_modules). */
async function footprint(dir: string): Promise<{ bytes: number; packages: number }> {
  let bytes = 0;
  let packages = 0;
  const walk = async (at: string, parentIsNodeModules: boolean, scope: boolean): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        const isScope = parentIsNodeModules && entry.name.startsWith("@");
        if ((parentIsNodeModules || scope) && !isScope && entry.name !== ".bin") packages++;
        await walk(path, entry.name === "node_modules", isScope);
      } else if (entry.isFile()) {
        bytes += (await stat(path)).size;
      }
    }
  };
  await walk(dir, basename(dir) === "node_modules", false);
  return { bytes, packages };
}

const MB = 1024 * 1024;
const figures: string[] = [];

const LIBRARIES = ["@nodekit/documents", "@nodekit/deploy-path"];
const MANAGERS = ["npm", "pnpm"] as const;

/** A consumer project of the two libraries, installed with `manager`. */
async function installLibraries(manager: (typeof MANAGERS)[number]) {
  const project = join(work, `project-${manager}`);
  const home = join(work, `home-${manager}-project`);
  await mkdir(project, { recursive: true });
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const result =
    manager === "npm"
      ? await npm(["install", ...LIBRARIES], home, project)
      : await execa("pnpm", ["add", ...LIBRARIES, "--store-dir", join(work, "pnpm-store")], {
          cwd: project,
          env: { ...cleanEnv(home), PATH: process.env.PATH ?? "" },
          extendEnv: false,
          reject: false,
        });
  installed[`project-${manager}`] = { prefix: project, log: `${result.stdout}\n${result.stderr}` };
  expect(result.exitCode, result.stderr).toBe(0);
}

beforeAll(async () => {
  ({ path: work, cleanup } = await tempDir("install-tier-"));
  const packages = await publicPackages(repoRoot);
  const mirrored = await mirrorTarballs(await thirdPartyClosure(packages), join(CACHE, "mirror"));
  await mkdir(join(work, "registry"));
  registry = await startLocalRegistry(join(work, "registry"), mirrored);
  // `pnpm release` as a maintainer runs it, less the versioning, the build (./run test built
  // everything) and the git tags: pack every public package, publish each with npm.
  const out = join(work, "tarballs");
  const release = await execa(
    process.execPath,
    [join(repoRoot, "tooling/packaging/src/release.ts"), "--no-version", "--no-build", "--no-tag", "--out", out],
    {
      cwd: repoRoot,
      env: { ...cleanEnv(join(work, "publisher")), PATH: process.env.PATH ?? "" },
      extendEnv: false,
      reject: false,
    },
  );
  expect(release.exitCode, release.stderr).toBe(0);
  packed = packages.map((pkg) => ({
    name: pkg.manifest.name,
    version: pkg.manifest.version,
    tarball: join(out, `${pkg.manifest.name.replace("@", "").replace("/", "-")}-${pkg.manifest.version}.tgz`),
  }));
  // The installs, at once: each in a clean prefix or project of its own, with a HOME of its own.
  await Promise.all([
    ...["nvkectl", "nr"].map(async (name) => {
      const prefix = join(work, `npm-${name}`);
      const result = await npm(
        ["install", "--global", "--prefix", prefix, `@nodekit/${name}`],
        join(work, `home-${name}`),
      );
      installed[name] = { prefix, log: `${result.stdout}\n${result.stderr}` };
      expect(result.exitCode, result.stderr).toBe(0);
    }),
    ...MANAGERS.map(installLibraries),
  ]);
}, 15 * 60_000);

afterAll(async () => {
  await registry?.stop();
  await cleanup?.();
  if (figures.length > 0) process.stderr.write(`install tier figures:\n${figures.join("\n")}\n`);
});

describe("the published packages", () => {
  it("every public package is in the registry, with its LICENSE and every export it names shipped", async () => {
    for (const pkg of packed) {
      const response = await fetch(new URL(pkg.name.replace("/", "%2f"), registry.url));
      expect(response.status, pkg.name).toBe(200);
      const packument = (await response.json()) as { versions: Record<string, { exports?: unknown }> };
      const manifest = packument.versions[pkg.version];
      expect(manifest, `${pkg.name}@${pkg.version}`).toBeDefined();
      const files = (await execa("tar", ["-tzf", pkg.tarball])).stdout.split("\n");
      expect(files, pkg.name).toContain("package/LICENSE");
      const targets: string[] = [];
      const collect = (value: unknown, key?: string): void => {
        expect(key, `${pkg.name}: a published export keeps the "source" condition`).not.toBe("source");
        if (typeof value === "string") targets.push(value);
        else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) collect(v, k);
      };
      collect(manifest?.exports);
      for (const target of targets)
        expect(files, `${pkg.name} exports ${target}`).toContain(`package/${target.replace(/^\.\//, "")}`);
    }
  });
});

describe("npm install --global @nodekit/nvkectl, in a clean prefix", () => {
  const nvkectl = (args: string[], env: Record<string, string> = {}) =>
    execa(join(installed.nvkectl?.prefix ?? "", "bin", "nvkectl"), args, {
      cwd: work,
      env: { ...cleanEnv(join(work, "home-nvkectl")), ...env },
      extendEnv: false,
      reject: false,
    });

  it("installs alone, within 40 MB", async () => {
    const { bytes, packages } = await footprint(join(installed.nvkectl?.prefix ?? "", "lib"));
    figures.push(`nvkectl (npm): ${(bytes / MB).toFixed(1)} MB, ${packages} packages`);
    expect(bytes).toBeLessThanOrEqual(40 * MB);
  });

  it("--version and --help", async () => {
    const version = await nvkectl(["--version"]);
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^@nodekit\/nvkectl\/\d+\.\d+\.\d+ linux-/);
    const help = await nvkectl(["--help"]);
    expect(help.exitCode, help.stderr).toBe(0);
    expect(help.stdout).toContain("install");
  });

  it("install --dry-run with the deploy path the package ships (no --deploy-path), against a real cluster", async () => {
    const plane = await useControlPlane({ dedicated: true });
    const kubectl = (...args: string[]) =>
      execa("kubectl", ["--kubeconfig", plane.adminKubeconfigPath, ...args], {
        env: { PATH: `${plane.binDir}:${process.env.PATH}` },
        reject: false,
      });
    const node = {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "tier0-cp-1", labels: { "kubernetes.io/arch": "amd64" } },
    };
    await writeFile(join(work, "node.json"), JSON.stringify(node));
    expect((await kubectl("apply", "-f", join(work, "node.json"))).exitCode).toBe(0);
    const providers = await providerRepository(process.env, () => {});
    const generated = await nvkectl([
      "sitespec",
      "generate",
      "--hosts",
      join(repoRoot, "examples/hosts.csv"),
      "--site-name",
      "tier",
      "--output-file",
      join(work, "sitespec.yaml"),
    ]);
    expect(generated.exitCode, generated.stderr).toBe(0);
    const stack = (await readFile(join(repoRoot, "examples/stack.yaml"), "utf8"))
      .replace("REPLACE_NICO_API_ENDPOINT", "https://nico.example.net/api")
      .replace("REPLACE_NICO_ORGANIZATION_ID", "org-1")
      .replace("REPLACE_NICO_API_NAME", "nvke")
      .replace("REPLACE_PROFILES_IMAGE", "registry.example.net/nvke/profiles:v1")
      .replace("REPLACE_PROVIDER_REPOSITORY_DIR", providers);
    await writeFile(join(work, "stack.yaml"), stack);
    const dry = await nvkectl(
      [
        "install",
        "--sitespec",
        join(work, "sitespec.yaml"),
        "--stack-config",
        join(work, "stack.yaml"),
        "--kubeconfig",
        plane.adminKubeconfigPath,
        "--work-dir",
        join(work, "install"),
        "--dry-run",
      ],
      { NVKE_NICO_API_KEY: "tier-not-a-secret", PATH: `${plane.binDir}:${NODE_BIN}:/usr/bin:/bin` },
    );
    expect(dry.stderr).toBe("");
    expect(dry.exitCode).toBe(0);
    const shipped = join(installed.nvkectl?.prefix ?? "", "lib/node_modules/@nodekit/nvkectl/deploy/nico");
    expect(dry.stdout).toMatch(/^# \[1\/\d+\] cluster-api: Cluster API/m);
    expect(dry.stdout).toContain(join(shipped, "nvke-controller"));
  }, 300_000);
});

describe("npm install --global @nodekit/nr, in a clean prefix", () => {
  it("installs alone, within 25 MB; --version, --help, and cluster register --dry-run against the emulator", async () => {
    const prefix = installed.nr?.prefix ?? "";
    const { bytes, packages } = await footprint(join(prefix, "lib"));
    figures.push(`nr (npm): ${(bytes / MB).toFixed(1)} MB, ${packages} packages`);
    const home = join(work, "home-nr");
    const emulator = await startNodeRingsEmulator({ tokens: ["tier-token"] });
    try {
      const nr = (args: string[]) =>
        execa(join(prefix, "bin", "nr"), args, {
          cwd: work,
          env: { ...cleanEnv(home), NR_HOME: join(home, ".nr"), NR_API_URL: emulator.url, NR_API_TOKEN: "tier-token" },
          extendEnv: false,
          reject: false,
        });
      const version = await nr(["--version"]);
      expect(version.exitCode, version.stderr).toBe(0);
      expect(version.stdout).toMatch(/^@nodekit\/nr\/\d+\.\d+\.\d+ linux-/);
      expect((await nr(["--help"])).stdout).toContain("cluster");
      const dry = await nr(["cluster", "register", "--name", "tier-agent", "--dry-run"]);
      expect(dry.exitCode, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(/^# \[10\/10\] verify: /m);
    } finally {
      await emulator.stop();
    }
    expect(bytes).toBeLessThanOrEqual(25 * MB);
  }, 120_000);
});

describe("two libraries, installed into a project with npm and with pnpm", () => {
  // Each library used for real: the repository's deploy path read and validated, its name checked as a DNS label.
  const script = `import { isDnsLabel } from "@nodekit/documents";
import { readDeployPath } from "@nodekit/deploy-path";
const path = await readDeployPath(process.argv[2], { cwd: process.cwd() });
console.log(isDnsLabel(path.name), path.items.length);
`;

  for (const manager of MANAGERS) {
    it(manager, async () => {
      const project = installed[`project-${manager}`]?.prefix ?? "";
      await writeFile(join(project, "use.js"), script);
      const { bytes, packages } = await footprint(join(project, "node_modules"));
      figures.push(`${LIBRARIES.join(" + ")} (${manager}): ${(bytes / MB).toFixed(1)} MB, ${packages} packages`);
      const run = await execa(process.execPath, ["use.js", join(repoRoot, "deploy/nico")], {
        cwd: project,
        reject: false,
      });
      expect(run.stderr).toBe("");
      expect(run.stdout.trim()).toMatch(/^true [1-9]\d*$/);
      // deploy-path builds calls; the Kubernetes client library is not installed for it (npm's flat tree, pnpm's store).
      const modules = join(project, "node_modules");
      const stored = await readdir(join(modules, ".pnpm")).catch(() => [] as string[]);
      expect(stored.filter((entry) => entry.startsWith("@kubernetes+client-node"))).toEqual([]);
      await expect(stat(join(modules, "@kubernetes/client-node"))).rejects.toMatchObject({ code: "ENOENT" });
    });
  }
});

describe("@nodekit/testing, installed into a plugin's project with npm", () => {
  it("ships the script that finds or builds kube-apiserver and etcd, not the binaries, and starts the control plane and the emulators", async () => {
    const tarball = packed.find((pkg) => pkg.name === "@nodekit/testing")?.tarball ?? "";
    const files = (await execa("tar", ["-tzf", tarball])).stdout.split("\n");
    expect(files).toContain("package/k8s-testbin/ensure.sh");
    expect(files).toContain("package/k8s-testbin/go-testbin.sh");
    expect(files).toContain("package/k8s-testbin/kube-apiserver/go.mod");
    expect(files.filter((file) => /\/(kube-apiserver|etcd|helm|clusterctl)$/.test(file))).toEqual([]);
    const project = join(work, "project-testing");
    await mkdir(project, { recursive: true });
    await writeFile(
      join(project, "package.json"),
      JSON.stringify({ name: "plugin-tests", private: true, type: "module" }),
    );
    const install = await npm(["install", "@nodekit/testing"], join(work, "home-testing"), project);
    expect(install.exitCode, install.stderr).toBe(0);
    const { bytes, packages } = await footprint(join(project, "node_modules"));
    figures.push(`@nodekit/testing (npm): ${(bytes / MB).toFixed(1)} MB, ${packages} packages`);
    // The binaries from the runner's directory (NODEKIT_TESTENV_BIN_DIR), as a plugin's CI would give them.
    const plane = await useControlPlane();
    await writeFile(
      join(project, "use.js"),
      `import { join } from "node:path";
import { startControlPlane, startNodeRingsEmulator, startNvkeEmulator } from "@nodekit/testing";
const plane = await startControlPlane();
const nvke = await startNvkeEmulator({ kubeconfigPath: plane.adminKubeconfigPath, stateFile: join(plane.dataDir, "nvke.json") });
const noderings = await startNodeRingsEmulator({ tokens: ["t"] });
await nvke.seed({ clusters: 1 });
const clusters = await (await fetch(new URL("/api/v1/clusters", nvke.url))).json();
console.log(clusters.items.length, new URL(noderings.url).hostname);
await noderings.stop();
await nvke.stop();
await plane.stop();
`,
    );
    const run = await execa(process.execPath, ["use.js"], {
      cwd: project,
      env: {
        PATH: `${NODE_BIN}:/usr/bin:/bin`,
        HOME: join(work, "home-testing"),
        NODEKIT_TESTENV_BIN_DIR: plane.binDir,
      },
      extendEnv: false,
      reject: false,
    });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("1 127.0.0.1");
  }, 300_000);
});
