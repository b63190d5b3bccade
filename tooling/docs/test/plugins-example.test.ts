import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { expect, it } from "vitest";

// docs/plugins.md's ```ts examples are what a plugin author copies: each one is compiled, as a
// plugin's own project compiles it, against the BUILT packages (their dist/*.d.ts, the types
// a plugin gets from the registry: no `source` condition), strictly and without skipLibCheck.
// `./run test` builds first; run `./run setup` before this file on its own.

const run = promisify(execFile);
const tsc = createRequire(join(repoRoot, "package.json")).resolve("typescript/bin/tsc");

/** The packages a plugin imports, linked into the example project's node_modules as an install would place them. */
const PACKAGES = ["cli-kit", "errors", "testing"];

/** Every ```ts block of a Markdown text. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "");
}

/** Compiles `files` in a project of their own, as a consumer's, against the built `packages`: tsc's output and exit code. */
async function compileAgainstBuilt(
  packages: readonly string[],
  files: Record<string, string>,
): Promise<{ code: number; out: string }> {
  const project = await tempDir("plugin-example-");
  try {
    const modules = join(project.path, "node_modules");
    await mkdir(join(modules, "@nodekit"), { recursive: true });
    await mkdir(join(modules, "@types"), { recursive: true });
    for (const name of packages) {
      await symlink(join(repoRoot, "packages", name), join(modules, "@nodekit", name), "dir");
    }
    const typesNode = dirname(createRequire(join(repoRoot, "package.json")).resolve("@types/node/package.json"));
    await symlink(typesNode, join(modules, "@types", "node"), "dir");
    await writeFile(join(project.path, "package.json"), JSON.stringify({ name: "my-plugin", type: "module" }));
    await writeFile(
      join(project.path, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          lib: ["ES2023"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          types: ["node"],
          strict: true,
          noUncheckedIndexedAccess: true,
          noImplicitOverride: true,
          verbatimModuleSyntax: true,
          skipLibCheck: false,
          noEmit: true,
        },
        include: ["src"],
      }),
    );
    await mkdir(join(project.path, "src"));
    for (const [name, text] of Object.entries(files)) await writeFile(join(project.path, "src", name), text);
    return await run(process.execPath, [tsc, "-p", project.path], { cwd: project.path }).then(
      () => ({ code: 0, out: "" }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code ?? 1, out: error.stdout ?? "" }),
    );
  } finally {
    await project.cleanup();
  }
}

it("every ts example in docs/plugins.md compiles against the built packages", { timeout: 120_000 }, async () => {
  const blocks = tsBlocks(await readFile(join(repoRoot, "docs/plugins.md"), "utf8"));
  expect(blocks.length).toBeGreaterThan(0);
  const result = await compileAgainstBuilt(
    PACKAGES,
    Object.fromEntries(blocks.map((block, i) => [`example-${i + 1}.ts`, block])),
  );
  expect(result.out).toBe("");
  expect(result.code).toBe(0);
});

// The libraries' declarations are made by tooling/tsup/declarations.ts (one program, then a
// bundle per library): each library's dist/index.d.ts must compile in a consumer's strict
// project, and a name a library does not export must not.
it("every public library's declarations compile in a consumer's project, strictly", { timeout: 120_000 }, async () => {
  const libraries = (await readdir(join(repoRoot, "packages"))).filter(
    (name) => JSON.parse(readFileSync(join(repoRoot, "packages", name, "package.json"), "utf8")).private !== true,
  );
  expect(libraries).toEqual(expect.arrayContaining(["errors", "kube", "phase-runner", "version-pins"]));
  const all = libraries.map((name, i) => `export * as library${i} from "@nodekit/${name}";\n`).join("");
  expect(await compileAgainstBuilt(libraries, { "all.ts": all })).toEqual({ code: 0, out: "" });
  const wrong = await compileAgainstBuilt(["errors"], {
    "wrong.ts": 'import { ExitCode } from "@nodekit/errors";\nexport const code: number = ExitCode.NoSuchCode;\n',
  });
  expect(wrong.code).not.toBe(0);
  expect(wrong.out).toContain("Property 'NoSuchCode' does not exist");
});
