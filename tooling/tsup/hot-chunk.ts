import { readFile, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import type { Plugin } from "rollup";

// esbuild splits a bundle by which entries reach each module: every distinct set is a chunk
// of its own. With one entry per command that is many small chunks, and a command's start
// loads every one its path reaches: a cached `nvkectl get clusters -o json` loaded 38 files.
// For each file Node's ES module loader resolves the specifier, parses the URL, looks up the
// package scope, stats and realpaths it, reads it, checks its compile cache and links it:
// about a millisecond of CPU a file, before any of the CLI's own code runs.
//
// So after esbuild, the chunks a hot path loads are merged into one file, dist/hot-<hash>.js,
// by rollup: it takes esbuild's chunks as its modules and keeps each in exactly one output
// chunk (one module graph, so one copy of each class: a cold path that loads later imports
// the same hot file). The entries keep their names (the manifest, the bin and the oclif
// loader find them by path); the launcher's own imports (esbuild's runtime helpers) stay a
// file apart, so that the engine check still runs before anything else loads. The rest of
// the chunks are regrouped by rollup the way esbuild groups them: by the entries that reach them.
//
// The files rollup writes are CommonJS (dist/package.json says so; bin/package.json for the
// bin): Node then loads the bin, the launcher and the hot file through require, without its
// ES module loader (its module jobs, linking and the asynchronous evaluation of each file),
// about 5 % of a cached read. The bundle has no top-level await; a dynamic import of one of
// its own files becomes a require, one of an external package stays import(), and an
// external imported statically is required (Node 22.12 and later require ES modules).
//
// dist/metafile-esm.json is rewritten to describe the files written: for each, the source
// modules it holds and what it imports (the start-up guard tests read it). esbuild's own is not
// kept: it names the checkout's absolute paths, which would make the bundle differ by checkout.

/** esbuild's metafile (the part read here). */
export interface Metafile {
  outputs: Record<
    string,
    {
      entryPoint?: string;
      inputs: Record<string, { bytesInOutput: number }>;
      imports: { path: string; kind: string; external?: boolean }[];
      bytes?: number;
    }
  >;
}

export interface HotChunkOptions {
  /**
   * The source modules that start the hot paths, as the metafile names them (relative to
   * the package: "src/commands/get/clusters.ts", "../../packages/cli-kit/src/launch/fast.ts").
   * The files they are in, and every file those import statically, become the hot file
   * (entries excepted: they stay files of their own, importing it).
   */
  hot: readonly string[];
  /**
   * Entries (source modules) whose static imports stay out of the hot file, each entry's in a
   * file of its own, in this order: what the bin loads before it knows the command line.
   * Default: src/launch.ts (the engine check: esbuild's runtime helpers only) and src/run.ts
   * (the launcher: `--version` loads nothing more).
   */
  apart?: readonly string[];
}

/** What goes where: for each of esbuild's output files, the chunk rollup is to put it in. */
export interface HotChunkPlan {
  /** The files that stay entries (their names are fixed), by rollup input name ("commands/get/clusters"). */
  entries: Map<string, string>;
  /** Output file → the chunk it goes in ("hot", "launch-imports", …); files not listed are left to rollup. */
  manual: Map<string, string>;
}

/** The hash esbuild ends the name of a chunk or a dynamic import's file with: `<name>-<8 characters>.js`. */
const HASH = /-[A-Z0-9]{8}$/;

/** The files an output imports statically (its own chunks, not externals), transitively, itself included. */
function staticClosure(meta: Metafile, roots: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of meta.outputs[file]?.imports ?? []) {
      if (imported.kind === "import-statement" && !imported.external && imported.path in meta.outputs) {
        stack.push(imported.path);
      }
    }
  }
  return seen;
}

/**
 * The value with every object's keys in sorted order (arrays keep theirs). Given its entries in
 * the same order (base.ts, sortEntryPoints), esbuild writes the same files from build to build,
 * but not the same metafile: with plugins that resolve asynchronously, the order of its keys
 * changes (evanw/esbuild#1766). Read as it came, that order became rollup's order of entries,
 * and so each merged file's module order, its hash, and the name of every file that imports it:
 * no two builds of the same sources were alike, and the single executables, whose cache is keyed
 * by the built files, were built anew each time (tooling/packaging/src/sea.ts).
 */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  ) as T;
}

/** The plan, from esbuild's metafile alone (pure: the build's step below carries it out), the same whatever the order of its keys. */
export function planHotChunk(meta: Metafile, options: HotChunkOptions): HotChunkPlan {
  const js = Object.keys(meta.outputs)
    .filter((file) => file.endsWith(".js"))
    .sort();
  const entries = new Map<string, string>();
  for (const file of js) {
    if (meta.outputs[file]?.entryPoint !== undefined && !HASH.test(file.replace(/\.js$/, ""))) {
      entries.set(file.replace(/^dist\//, "").replace(/\.js$/, ""), file);
    }
  }
  const entryFiles = new Set(entries.values());
  // A file holds a module, or is its dynamic import's facade (esbuild's file for `import()`
  // of a module another chunk holds re-exports it).
  const holds = (file: string, input: string) =>
    input in (meta.outputs[file]?.inputs ?? {}) || meta.outputs[file]?.entryPoint === input;
  const filesOf = (inputs: readonly string[]) => {
    const missing = inputs.filter((input) => !js.some((file) => holds(file, input)));
    if (missing.length > 0)
      throw new Error(`hotChunk: no output holds ${missing.join(", ")}: fix the CLI's tsup.config.ts`);
    return js.filter((file) => inputs.some((input) => holds(file, input)));
  };
  const manual = new Map<string, string>();
  const assign = (files: Iterable<string>, chunk: string) => {
    for (const file of staticClosure(meta, files)) {
      if (!entryFiles.has(file) && !manual.has(file)) manual.set(file, chunk);
    }
  };
  for (const input of options.apart ?? ["src/launch.ts", "src/run.ts"]) {
    const [file] = filesOf([input]);
    assign([file as string], `${(file as string).replace(/^dist\//, "").replace(/\.js$/, "")}-imports`);
  }
  assign(filesOf(options.hot), "hot");
  return { entries, manual };
}

/**
 * tsup's `onSuccess`: merges the chunks of the hot paths into one file (see above). `dir` is
 * the package directory (the build's working directory).
 */
export function hotChunk(options: HotChunkOptions, dir = process.cwd()): () => Promise<void> {
  return async () => {
    const { rollup } = await import("rollup");
    const dist = resolve(dir, "dist");
    const metaPath = join(dist, "metafile-esm.json");
    const meta = sortKeys(JSON.parse(await readFile(metaPath, "utf8")) as Metafile);
    const plan = planHotChunk(meta, options);
    const manual = new Map([...plan.manual].map(([file, chunk]) => [resolve(dir, file), chunk]));
    const bundle = await rollup({
      input: Object.fromEntries([...plan.entries].map(([name, file]) => [name, resolve(dir, file)])),
      // Every bare specifier is an external the CLI resolves at run time (execa, @kubernetes/client-node…).
      external: (id) => !id.startsWith(".") && !id.startsWith("/"),
      // esbuild has shaken the tree; rollup only moves code (and keeps every module's side effects).
      treeshake: { moduleSideEffects: true },
      plugins: [eagerModuleBodies((id) => manual.get(id) === "hot"), importsOutOfTheHotFile()],
      onwarn(warning, warn) {
        if (warning.code !== "CIRCULAR_DEPENDENCY") warn(warning);
      },
    });
    const { output } = await bundle.generate({
      format: "cjs",
      // Each entry's exports as `exports.name` (a command's class is `exports.default`), as oclif reads them.
      exports: "named",
      generatedCode: "es2015",
      entryFileNames: "[name].js",
      chunkFileNames: (chunk) => `${chunk.name.replace(HASH, "")}-[hash].js`,
      manualChunks: (id) => manual.get(id),
      minifyInternalExports: false,
    });
    await bundle.close();
    // The new files in place of esbuild's: dist/ keeps what is not JavaScript (the metafile).
    for (const file of Object.keys(meta.outputs)) {
      if (file.endsWith(".js")) await rm(resolve(dir, file), { force: true });
    }
    const chunks = output.filter((chunk) => chunk.type === "chunk");
    for (const chunk of chunks) {
      if (!chunk.fileName.startsWith("hot-")) continue;
      if (/(?<![\w$.])import\(/.test(chunk.code)) {
        throw new Error(`hotChunk: ${chunk.fileName} has an import() left; see importsOutOfTheHotFile`);
      }
      chunk.code = asciiOnly(chunk.code, chunk.fileName);
    }
    const files = new Set(chunks.map((chunk) => chunk.fileName));
    const importOf = (path: string, kind: string) =>
      files.has(path) ? { path: `dist/${path}`, kind } : { path, kind, external: true };
    const written: Metafile = { outputs: {} };
    for (const chunk of chunks) {
      const inputs: Metafile["outputs"][string]["inputs"] = {};
      for (const id of chunk.moduleIds) Object.assign(inputs, meta.outputs[relative(dir, id)]?.inputs);
      const entryPoint = chunk.isEntry
        ? meta.outputs[relative(dir, chunk.facadeModuleId ?? "")]?.entryPoint
        : undefined;
      written.outputs[`dist/${chunk.fileName}`] = {
        ...(entryPoint === undefined ? {} : { entryPoint }),
        inputs,
        imports: [
          ...chunk.imports.map((path) => importOf(path, "import-statement")),
          ...chunk.dynamicImports.map((path) => importOf(path, "dynamic-import")),
        ],
        bytes: Buffer.byteLength(chunk.code),
      };
      await writeFile(join(dist, chunk.fileName), chunk.code);
    }
    await writeFile(metaPath, `${JSON.stringify(written, null, 2)}\n`);
    await writeFile(join(dist, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
    await writeFile(join(dist, HOT_IMPORT), HOT_IMPORT_SOURCE);
  };
}

// A CommonJS module bundled by esbuild is a method of an object passed to `__commonJS` (an
// ES module evaluated on first use, to `__esm`): `__commonJS({ "path"(exports, module) { … } })`.
// V8 compiles such a body only when it is first called, so every start pays for compiling
// oclif's module bodies again (Node's compile cache holds what was compiled at load). A function
// expression in parentheses is one V8 compiles at once, with the code around it, so the
// cache keeps it: `"path": (function(exports, module) { … })`, the same function otherwise.

/** The rollup plugin: in the modules `applies` picks, each such body made a parenthesized function. */
export function eagerModuleBodies(applies: (id: string) => boolean): Plugin {
  return {
    name: "nodekit-eager-module-bodies",
    transform(code, id) {
      if (!applies(id) || !/__(?:commonJS|esm)\(\{/.test(code)) return null;
      const edits: { at: number; text: string }[] = [];
      const visit = (node: unknown): void => {
        if (node === null || typeof node !== "object") return;
        if (Array.isArray(node)) {
          for (const child of node) visit(child);
          return;
        }
        const n = node as AstNode;
        if (
          n.type === "CallExpression" &&
          n.callee?.type === "Identifier" &&
          (n.callee.name === "__commonJS" || n.callee.name === "__esm") &&
          n.arguments?.[0]?.type === "ObjectExpression"
        ) {
          for (const property of n.arguments[0].properties ?? []) {
            if (property.type !== "Property" || !property.method || property.value?.type !== "FunctionExpression")
              continue;
            if (property.value.async || property.value.generator || property.key === undefined) continue;
            edits.push({ at: property.key.end, text: ": (function" }, { at: property.value.end, text: ")" });
          }
        }
        for (const [key, value] of Object.entries(n)) if (key !== "type") visit(value);
      };
      visit(this.parse(code));
      if (edits.length === 0) return null;
      let out = code;
      for (const edit of edits.sort((a, b) => b.at - a.at))
        out = out.slice(0, edit.at) + edit.text + out.slice(edit.at);
      return { code: out, map: null };
    },
  };
}

/** The part of an ESTree node the plugin above reads. */
interface AstNode {
  type: string;
  start: number;
  end: number;
  name?: string;
  method?: boolean;
  async?: boolean;
  generator?: boolean;
  callee?: AstNode;
  arguments?: AstNode[];
  properties?: AstNode[];
  key?: AstNode;
  value?: AstNode;
}

// The launcher compiles the hot file itself, with a code cache made after it ran
// (packages/cli-kit/src/launch/code-cache.ts), through node:vm, and in a script compiled that
// way an import() needs a loader callback that Node still calls experimental (it warns). So
// the hot file has none: each import() in it (of an external package: execa, the Kubernetes
// client, proper-lockfile) calls dist/dynamic-import.js, a module Node loads as it loads any,
// which imports the package from the same directory, with the same resolution.

/** The module the hot file's dynamic imports go through, beside it in dist/. */
const HOT_IMPORT = "dynamic-import.js";
const HOT_IMPORT_SOURCE = `"use strict";
// The hot file's import() (tooling/tsup/hot-chunk.ts): resolved from dist/, as from the hot file.
module.exports = (specifier) => import(specifier);
`;

/** The rollup plugin: in the hot file, \`import(x)\` of anything outside the bundle becomes \`require("./dynamic-import.js")(x)\`. */
function importsOutOfTheHotFile(): Plugin {
  return {
    name: "nodekit-imports-out-of-the-hot-file",
    renderDynamicImport({ chunk, targetChunk }) {
      if (!chunk.fileName.startsWith("hot-") || targetChunk !== null) return null;
      return { left: `require(${JSON.stringify(`./${HOT_IMPORT}`)})(`, right: ")" };
    },
  };
}

// The hot file in ASCII: V8 keeps a source with one character past it (an ellipsis in a
// message) as a two-byte string, twice the memory, and Node decodes it as UTF-8; an ASCII
// file the launcher reads as Latin-1, one byte a character (launch/code-cache.ts): ≈ 1.5 ms of
// a start's CPU for the ≈ 900 KB file. Each such character becomes its `\u` escape, which
// means the same character in a string, a template, a regular expression and a name, and
// changes only the text of a comment; String.raw is the one place it would not, so a hot
// file with one there fails the build.

/** `code` with every character past ASCII written as its `\u` escape (UTF-16 units). */
export function asciiOnly(code: string, file = "the hot file"): string {
  if (!/[\u0080-\uffff]/.test(code)) return code;
  for (const raw of code.matchAll(/String\.raw`(?:\\[\s\S]|[^`\\])*`/g)) {
    if (/[\u0080-\uffff]/.test(raw[0])) throw new Error(`hotChunk: ${file} has String.raw with characters past ASCII`);
  }
  return code.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
