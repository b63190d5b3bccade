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

// One consumer project, one tsc program (each costs seconds of CPU, most of it @types/node and
// the dependencies' declarations): docs/plugins.md's examples, every public library's
// declarations, and a file that must not compile.
// - The examples: each ```ts block, as a plugin author copies it.
// - The libraries: tooling/tsup/declarations.ts makes their declarations (one program, then a
//   bundle per library); each library's dist/index.d.ts must compile in a consumer's strict
//   project.
// - A name a library does not export must not: wrong.ts, whose error must be the only one.
it("docs/plugins.md's examples and every public library compile in a consumer's strict project; a wrong name does not", {
  timeout: 120_000,
}, async () => {
  const blocks = tsBlocks(await readFile(join(repoRoot, "docs/plugins.md"), "utf8"));
  expect(blocks.length).toBeGreaterThan(0);
  const libraries = (await readdir(join(repoRoot, "packages"))).filter(
    (name) => JSON.parse(readFileSync(join(repoRoot, "packages", name, "package.json"), "utf8")).private !== true,
  );
  expect(libraries).toEqual(expect.arrayContaining(["errors", "kube", "phase-runner", "version-pins"]));
  const all = libraries.map((name, i) => `export * as library${i} from "@nodekit/${name}";\n`).join("");
  const result = await compileAgainstBuilt([...new Set([...PACKAGES, ...libraries])], {
    ...Object.fromEntries(blocks.map((block, i) => [`example-${i + 1}.ts`, block])),
    "all.ts": all,
    "wrong.ts": 'import { ExitCode } from "@nodekit/errors";\nexport const code: number = ExitCode.NoSuchCode;\n',
  });
  expect(result.code).not.toBe(0);
  // tsc's diagnostics, one per line (`src/FILE(LINE,COL): error TSNNNN: …`; a continuation is indented).
  const errors = result.out.split("\n").filter((line) => /^\S.*error TS\d+/.test(line));
  expect(errors).toEqual([
    expect.stringMatching(/^src\/wrong\.ts\(2,\d+\): error TS\d+: Property 'NoSuchCode' does not exist/),
  ]);
});
