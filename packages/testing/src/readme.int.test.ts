import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot, runCli, tempDir } from "@nodekit/test-utils";
import { execa } from "execa";
import { expect, it } from "vitest";

// The README's example, run as a plugin author runs it: from a project of their own that
// installed @nodekit/testing (here the built package, linked), with `nvkectl` on PATH and a
// plugin linked whose command reads the NVKE controller API (apps/nvkectl/test/fixtures/quiet-plugin).

it("the README example starts a control plane and the NVKE emulator, and runs a plugin command against it", async () => {
  const readme = await readFile(join(repoRoot, "packages/testing/README.md"), "utf8");
  const example = /^```ts\n([\s\S]*?)^```$/m.exec(readme)?.[1];
  expect(example).toBeDefined();
  const project = await tempDir("testing-readme-");
  try {
    const home = join(project.path, "home");
    const bin = join(project.path, "bin");
    await mkdir(join(project.path, "node_modules", "@nodekit"), { recursive: true });
    await mkdir(bin);
    await symlink(join(repoRoot, "packages/testing"), join(project.path, "node_modules/@nodekit/testing"), "dir");
    await writeFile(join(project.path, "package.json"), JSON.stringify({ name: "my-plugin-tests", type: "module" }));
    await writeFile(join(project.path, "example.ts"), example ?? "");
    await writeFile(
      join(bin, "nvkectl"),
      `#!/bin/sh\nexec "${process.execPath}" "${join(repoRoot, "apps/nvkectl/bin/run.js")}" "$@"\n`,
      { mode: 0o755 },
    );
    const env = { HOME: home, XDG_DATA_HOME: join(home, "data"), XDG_CONFIG_HOME: join(home, "config") };
    const fixture = join(repoRoot, "apps/nvkectl/test/fixtures/quiet-plugin");
    const linked = await runCli("nvkectl", ["plugins", "link", "--no-install", fixture], { cwd: project.path, env });
    expect(linked.exitCode, linked.stderr).toBe(0);
    const run = await execa(process.execPath, ["example.ts"], {
      cwd: project.path,
      env: { ...env, PATH: `${bin}:${process.env.PATH}` },
      reject: false,
    });
    expect(run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe("[ 'demo-0', 'demo-1' ]");
  } finally {
    await project.cleanup();
  }
}, 180_000);
