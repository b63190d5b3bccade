// Every library's type declarations (dist/index.d.ts) from one TypeScript program, then one
// bundle per library. tsup's `dts` made a program of its own for each of the 22 libraries, and
// each loaded and checked what the libraries share (@kubernetes/client-node's declarations,
// zod's, the sibling libraries' sources) again: about 3 CPU-s a library (@nodekit/testing's,
// which takes in the private test packages' declarations, 14), where its JavaScript takes 0.3.
// Here the program is made once: TypeScript emits each library's declarations, file by file,
// into node_modules/.cache, and rollup-plugin-dts (the bundler tsup's `dts` runs too) joins
// each library's files into its one dist/index.d.ts. The same declarations as before (members
// of an inferred union may come in another order); `pnpm build` (every package and both CLIs)
// went from 50 to 22 s and from 89 to 32 CPU-s on 2 cores.
//
// `node tooling/tsup/declarations.ts [DIR…]`: the libraries in DIR… (packages/NAME), else every
// library built with `library(…)` (tooling/tsup/base.ts). The root `pnpm build` runs it once
// after the packages' JavaScript builds.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { type Plugin, rollup } from "rollup";
import { dts } from "rollup-plugin-dts";
import ts from "typescript";

const root = resolve(import.meta.dirname, "../..");
const out = join(root, "node_modules/.cache/nodekit-declarations");

/** The libraries whose declarations are made here: every package whose tsup.config.ts builds with `library(…)`. */
function libraries(): string[] {
  return readdirSync(join(root, "packages"))
    .map((name) => join("packages", name))
    .filter((dir) => {
      try {
        return /defineConfig\(\s*library\(/.test(readFileSync(join(root, dir, "tsup.config.ts"), "utf8"));
      } catch {
        return false;
      }
    });
}

/**
 * The workspace's private packages (tooling/*: the emulators, the test control plane), by name:
 * their directory and exports. No consumer can install one, so a library that imports one
 * (@nodekit/testing, which bundles their code too) has their declarations taken into its own.
 */
function privatePackages(): Map<string, { dir: string; exports: Record<string, string> }> {
  const found = new Map<string, { dir: string; exports: Record<string, string> }>();
  for (const name of readdirSync(join(root, "tooling"))) {
    const dir = join("tooling", name);
    let pkg: { name?: string; private?: boolean; exports?: Record<string, unknown> };
    try {
      pkg = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
    } catch {
      continue;
    }
    if (pkg.private !== true || pkg.name === undefined) continue;
    const exports = Object.fromEntries(
      Object.entries(pkg.exports ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
    );
    found.set(pkg.name, { dir, exports });
  }
  return found;
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
const inlined = privatePackages();
/** The private packages the libraries depend on, and those they depend on: their exports are roots, so emitted too. */
function privateRoots(): string[] {
  const seen = new Set<string>();
  const visit = (dir: string) => {
    const pkg = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Record<string, unknown>;
    for (const field of ["dependencies", "devDependencies"]) {
      for (const name of Object.keys((pkg[field] as Record<string, string> | undefined) ?? {})) {
        const found = inlined.get(name);
        if (found === undefined || seen.has(name)) continue;
        seen.add(name);
        visit(found.dir);
      }
    }
  };
  for (const dir of dirs) visit(dir);
  return [...seen].flatMap((name) => {
    const { dir, exports } = inlined.get(name) ?? { dir: "", exports: {} };
    return Object.values(exports).map((file) => join(root, dir, file));
  });
}

const program = ts.createProgram({
  rootNames: [...dirs.map((dir) => join(root, dir, "src/index.ts")), ...privateRoots()],
  options: {
    ...config.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: root,
    // Type errors fail the build, as tsup's did: the libraries' own and, with no skipLibCheck
    // (tsconfig.libraries.json's setting), those in the declarations of the dependencies they
    // expose, as a platform team compiling against a library meets them. So the checks that
    // `./run test` runs after this build need no second program over the libraries (about
    // 12 CPU-s; checking the declarations here adds about 5).
    skipLibCheck: false,
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

/** The declarations emitted for a private package's export (`@nodekit/testenv/vitest`), when `source` names one. */
function privateDeclarations(source: string): string | undefined {
  const [, name = "", subpath = ""] = /^(@[^/]+\/[^/]+)(\/.*)?$/.exec(source) ?? [];
  const pkg = inlined.get(name);
  const file = pkg?.exports[`.${subpath}`];
  return pkg === undefined || file === undefined ? undefined : join(out, pkg.dir, file.replace(/\.ts$/, ".d.ts"));
}

/**
 * The declarations keep the sources' own specifiers (`./codes.ts`, as the libraries import with
 * allowImportingTsExtensions): each names the file emitted beside it, `./codes.d.ts`; and a
 * private package's, the declarations emitted for it.
 */
const tsToDts: Plugin = {
  name: "ts-to-dts",
  resolveId(source, importer) {
    if (importer === undefined) return null;
    const bundled = privateDeclarations(source);
    if (bundled !== undefined) return bundled;
    if (!source.startsWith(".") || !source.endsWith(".ts")) return null;
    const file = resolve(dirname(importer), `${source.slice(0, -".ts".length)}.d.ts`);
    return existsSync(file) ? file : null;
  },
};

await Promise.all(
  dirs.map(async (dir) => {
    const bundle = await rollup({
      input: join(out, dir, "src/index.d.ts"),
      // Another package's types stay an import of that package, as tsup's dts left them (a private one's are taken in).
      external: (id) => !id.startsWith(".") && !isAbsolute(id) && privateDeclarations(id) === undefined,
      plugins: [tsToDts, dts({ respectExternal: false })],
    });
    await bundle.write({ file: join(root, dir, "dist/index.d.ts"), format: "es" });
    await bundle.close();
  }),
);
