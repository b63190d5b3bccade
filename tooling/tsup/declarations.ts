// Every library's type declarations (dist/index.d.ts) from one TypeScript program, then one
// bundle per library. tsup's `dts` made a program of its own for each of the 21 libraries, and
// each loaded and checked what the libraries share (@kubernetes/client-node's declarations,
// zod's, the sibling libraries' sources) again: about 3 CPU-s a library, where its JavaScript
// takes 0.3. Here the program is made once: TypeScript emits each library's declarations, file
// by file, into node_modules/.cache, and rollup-plugin-dts (the bundler tsup's `dts` runs too)
// joins each library's files into its one dist/index.d.ts. The same declarations as before
// (members of an inferred union may come in another order); the libraries' builds went from
// 49 to 27 CPU-s, 32 to 19 s (2 cores).
//
// `node tooling/tsup/declarations.ts [DIR…]`: the libraries in DIR… (packages/NAME), else every
// library whose build is `library()`'s (tooling/tsup/base.ts). The root `pnpm build` runs it
// once after the packages' JavaScript builds.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { type Plugin, rollup } from "rollup";
import { dts } from "rollup-plugin-dts";
import ts from "typescript";

const root = resolve(import.meta.dirname, "../..");
const out = join(root, "node_modules/.cache/nodekit-declarations");

/** The libraries whose declarations are made here: their tsup.config.ts builds with `library()` and no options. */
function libraries(): string[] {
  return readdirSync(join(root, "packages"))
    .map((name) => join("packages", name))
    .filter((dir) => {
      try {
        return /defineConfig\(library\(\)\)/.test(readFileSync(join(root, dir, "tsup.config.ts"), "utf8"));
      } catch {
        return false;
      }
    });
}

function fail(message: string): never {
  process.stderr.write(`declarations: ${message}\n`);
  process.exit(1);
}

const dirs = process.argv.length > 2 ? process.argv.slice(2).map((dir) => relative(root, resolve(dir))) : libraries();
const config = ts.getParsedCommandLineOfConfigFile(
  join(root, "tsconfig.libraries.json"),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) =>
      fail(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")),
  },
);
if (config === undefined) fail("tsconfig.libraries.json could not be read");

rmSync(out, { recursive: true, force: true });
const program = ts.createProgram({
  rootNames: dirs.map((dir) => join(root, dir, "src/index.ts")),
  options: {
    ...config.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: root,
    // Type errors in the libraries fail the build, as tsup's did; the dependencies' own
    // declarations are checked by `pnpm typecheck` (tsconfig.libraries.json), not twice.
    skipLibCheck: true,
    outDir: out,
  },
});
const emitted = program.emit();
const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].filter(
  (diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error,
);
if (problems.length > 0 || emitted.emitSkipped) {
  fail(
    ts.formatDiagnostics(problems, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => root,
      getNewLine: () => "\n",
    }),
  );
}

/**
 * The declarations keep the sources' own specifiers (`./codes.ts`, as the libraries import with
 * allowImportingTsExtensions): each names the file emitted beside it, `./codes.d.ts`.
 */
const tsToDts: Plugin = {
  name: "ts-to-dts",
  resolveId(source, importer) {
    if (importer === undefined || !source.startsWith(".") || !source.endsWith(".ts")) return null;
    const file = resolve(dirname(importer), `${source.slice(0, -".ts".length)}.d.ts`);
    return existsSync(file) ? file : null;
  },
};

await Promise.all(
  dirs.map(async (dir) => {
    const bundle = await rollup({
      input: join(out, dir, "src/index.d.ts"),
      // Another package's types stay an import of that package, as tsup's dts left them.
      external: (id) => !id.startsWith(".") && !isAbsolute(id),
      plugins: [tsToDts, dts({ respectExternal: false })],
    });
    await bundle.write({ file: join(root, dir, "dist/index.d.ts"), format: "es" });
    await bundle.close();
  }),
);
