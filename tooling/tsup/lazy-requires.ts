import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { builtinModules, createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import type { Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

// oclif's core is CommonJS whose modules require everything they might use at load: a
// command's module pulls in the plugin loader (tinyglobby, picomatch, minimatch, lilconfig),
// the help renderer (ejs), the spinner (cli-spinners) and more, though a command started
// from the shipped manifest never calls them. This esbuild plugin turns each module-level
// `const|var x = require("./y")` (also through __importDefault/__importStar) in
// @oclif/core/lib into a binding that requires the module on first property access. The
// module graph and what runs are the same; only when each module is evaluated changes.
// Node's built-ins are deferred too: oclif requires readline, perf_hooks and child_process
// for what a command from the manifest never does (stdin, timings, the shell).

const LINE =
  /^(const|var) ([A-Za-z_$][\w$]*) = ((?:__importDefault|__importStar)\()?require\((["'])([^"']+)\4\)(\))?;$/gm;

/** The helper every rewritten module gets: a proxy that loads the module when first used. */
const HELPER = `function __nodekitLazy(load) {
  let loaded;
  const get = () => (loaded ??= load());
  return new Proxy({}, {
    get: (_, key) => get()[key],
    has: (_, key) => key in get(),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor(_, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(get(), key);
      if (descriptor !== undefined) descriptor.configurable = true;
      return descriptor;
    },
  });
}
`;

/** Rewrites one module's source; returns it unchanged when it has no module-level require to defer. */
function deferRequires(source: string): string {
  let count = 0;
  const rewritten = source.replace(
    LINE,
    (
      line,
      kind: string,
      name: string,
      wrapper: string | undefined,
      quote: string,
      specifier: string,
      close?: string,
    ) => {
      if ((wrapper !== undefined) !== (close !== undefined)) return line;
      // Only bindings that are used as objects: TypeScript's `name_1 = require(…)` (it emits
      // `name_1.member` and `(0, name_1.fn)(…)`) and __importDefault/__importStar results.
      // A hand-written `const wrap = require("wordwrap")` may be called: it stays as it is.
      if (wrapper === undefined && !/_\d+$/.test(name)) return line;
      count++;
      const load = `${wrapper ?? ""}require(${quote}${specifier}${quote})${close ?? ""}`;
      return `${kind} ${name} = __nodekitLazy(() => ${load});`;
    },
  );
  return count === 0 ? source : `${rewritten}\n${HELPER}`;
}

// Deferring evaluation is not enough for what a read loads, though: the chunks that hold
// the deferred modules are still imported, read and compiled on every start (≈ 580 KB of
// the ≈ 1 MB a cached read loaded: the plugin loader with minimatch and picomatch, the help
// renderer with ejs, the spinners, debug). So the bundle is split in two. The modules a
// command run from the manifest evaluates (LIGHT: the command class, the parser, the
// errors, the flags, the utilities) stay in the chunks every command imports; whatever
// else they require is reached through dist/oclif-heavy.js, an entry of its own that Node
// loads (require of an ES module, synchronous) on first use. One build, one module graph:
// a module both halves reach is in a chunk they share, so there is one copy of each.

/** oclif's modules a command from the manifest evaluates, relative to @oclif/core's directory. */
const LIGHT =
  /^(?:lib\/(?:args|cache|command|flags|logger|settings|screen|symbols)\.js|lib\/(?:parser|errors|util)\/.+\.js|lib\/config\/util\.js|lib\/help\/util\.js|package\.json)$/;

/** The heavy half's entry and the loader the light half reaches it through (virtual modules). */
const HEAVY_ENTRY = "nodekit-oclif-heavy";
const LOADER = "nodekit-oclif-loader";
const NAMESPACE = "nodekit-oclif";

/** The loader: dist/oclif-heavy.js, required (it is an ES module: Node loads it synchronously) when first needed. */
const LOADER_SOURCE = `let heavy;
export function load(key) {
  heavy ??= globalThis.process.getBuiltinModule("node:module").createRequire(import.meta.url)("./oclif-heavy.js");
  const module = heavy.modules[key];
  if (module === undefined) throw new Error(\`the CLI's dist/oclif-heavy.js has no module \${key}: rebuild the CLI\`);
  return module();
}
`;

const HEAVY_HELPER = `function __nodekitHeavy(key) {
  return require("${LOADER}").load(key);
}
`;

const REQUIRE_CALL = /\brequire\((["'])([^"']+)\1\)/g;

interface Split {
  /** For each light module (absolute path): the specifiers it requires that are heavy, and their keys. */
  rewrites: Map<string, Map<string, string>>;
  /** Each heavy module reached from the light half: its key (a path relative to the CLI) and absolute path. */
  heavy: Map<string, string>;
}

/** Which requires of the light modules reach the heavy half, read from @oclif/core's files. */
function planSplit(core: string, cwd: string, external: readonly string[]): Split {
  const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
  const rewrites = new Map<string, Map<string, string>>();
  const heavy = new Map<string, string>();
  for (const entry of readdirSync(join(core, "lib"), { recursive: true, encoding: "utf8" })) {
    const file = join(core, "lib", entry);
    if (!file.endsWith(".js") || !LIGHT.test(relative(core, file))) continue;
    const resolveFrom = createRequire(file);
    const specs = new Map<string, string>();
    for (const [, , spec = ""] of readFileSync(file, "utf8").matchAll(REQUIRE_CALL)) {
      // Built-ins and the build's externals (TypeScript loaders oclif looks for in development) stay requires.
      if (builtins.has(spec) || specs.has(spec) || external.includes(spec)) continue;
      let target: string;
      try {
        target = resolveFrom.resolve(spec);
      } catch {
        continue; // an optional dependency (ts-node …): left to the build's externals
      }
      if (target.startsWith(core) && LIGHT.test(relative(core, target))) continue;
      const key = relative(cwd, target);
      specs.set(spec, key);
      heavy.set(key, target);
    }
    if (specs.size > 0) rewrites.set(file, specs);
  }
  return { rewrites, heavy };
}

/** A light module's source with each require of a heavy module made a call of the loader. */
function toHeavy(source: string, specs: Map<string, string>): string {
  let count = 0;
  const rewritten = source.replace(REQUIRE_CALL, (call, _quote: string, spec: string) => {
    const key = specs.get(spec);
    if (key === undefined) return call;
    count++;
    return `__nodekitHeavy(${JSON.stringify(key)})`;
  });
  return count === 0 ? source : `${rewritten}\n${HEAVY_HELPER}`;
}

/**
 * The esbuild plugin: defers the module-level requires of every bundled @oclif/core/lib
 * module, and splits what a command from the manifest never evaluates into dist/oclif-heavy.js.
 * `external`: the build's own externals (tsup's `external`), which stay requires here too.
 */
export function lazyOclifRequires(options: { external?: readonly string[] } = {}): Plugin {
  return {
    name: "nodekit-lazy-oclif-requires",
    setup(build) {
      const cwd = build.initialOptions.absWorkingDir ?? process.cwd();
      const core = dirname(dirname(createRequire(join(cwd, "package.json")).resolve("@oclif/core")));
      const split = planSplit(core, cwd, [...(build.initialOptions.external ?? []), ...(options.external ?? [])]);
      const entryPoints = build.initialOptions.entryPoints;
      if (!Array.isArray(entryPoints)) throw new Error("lazyOclifRequires: the build's entry points must be a list");
      (entryPoints as (string | { in: string; out: string })[]).push({ in: HEAVY_ENTRY, out: "oclif-heavy" });
      build.onResolve({ filter: new RegExp(`^(?:${HEAVY_ENTRY}|${LOADER})$`) }, (args) => ({
        path: args.path,
        namespace: NAMESPACE,
      }));
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents:
          args.path === HEAVY_ENTRY
            ? `export const modules = {\n${[...split.heavy]
                .map(([key, path]) => `  ${JSON.stringify(key)}: () => require(${JSON.stringify(path)}),`)
                .join("\n")}\n};\n`
            : LOADER_SOURCE,
        loader: "js",
        resolveDir: cwd,
      }));
      build.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, async (args) => {
        const source = await readFile(args.path, "utf8");
        const deferred = deferRequires(source);
        // A new oclif whose modules this no longer understands fails the build, not start-up.
        if (deferred === source && /[\\/]lib[\\/]command\.js$/.test(args.path)) {
          throw new Error(`${args.path}: no module-level require to defer; update tooling/tsup/lazy-requires.ts`);
        }
        const specs = split.rewrites.get(args.path);
        return { contents: specs === undefined ? deferred : toHeavy(deferred, specs), loader: "js" };
      });
    },
  };
}
