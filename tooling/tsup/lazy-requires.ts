import { readFile } from "node:fs/promises";
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

/** The esbuild plugin: defers the module-level requires of every bundled @oclif/core/lib module. */
export function lazyOclifRequires(): Plugin {
  return {
    name: "nodekit-lazy-oclif-requires",
    setup(build) {
      build.onLoad({ filter: /[\\/]@oclif[\\/]core[\\/]lib[\\/].*\.js$/ }, async (args) => {
        const source = await readFile(args.path, "utf8");
        const contents = deferRequires(source);
        // A new oclif whose modules this no longer understands fails the build, not start-up.
        if (contents === source && /[\\/]lib[\\/]command\.js$/.test(args.path)) {
          throw new Error(`${args.path}: no module-level require to defer; update tooling/tsup/lazy-requires.ts`);
        }
        return { contents, loader: "js" };
      });
    },
  };
}
