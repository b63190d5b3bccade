import { builtinModules } from "node:module";
import type { Options } from "tsup";

type Plugin = NonNullable<Options["plugins"]>[number];

// An ES import of a Node.js built-in builds the module's ES facade: every export is read
// once, and some exports are lazy getters that load more of Node (`import … from "node:fs"`
// reads fs.ReadStream, which loads Node's file streams; node:http's namespace loads undici).
// Each import is also one more specifier for the ES loader to resolve and link. A CLI that
// starts thirty times a minute pays that on every start, for bindings it mostly never uses.
// This tsup plugin rewrites each built-in import of the bundle's chunks into a
// `process.getBuiltinModule` binding: the same object, no facade, nothing read but the
// names imported.

// A built-in that no hot path uses may still be imported by a module a hot path loads
// (node:crypto: fs-safe's digest and temporary names, k8s-auth's hashed site directories):
// loading it costs ≈ 1.5–2 ms of CPU on every start. Its named imports that are plain
// functions (lower-case names: createHash, randomBytes) are bound to a function that loads
// the module on its first call; anything else (a class, a constant, a default or namespace
// import) is bound at once, as above.
const LAZY = new Set(["node:crypto"]);

/** `const { a, b: c } = …` for the names of a lazy built-in: each a function calling the module's own on first use. */
function lazyBindings(module: string, names: ReadonlyArray<[string, string]>): string[] {
  return names.map(([imported, local]) =>
    /^[a-z]/.test(imported)
      ? `function ${local}() { return ${module}.${imported}.apply(this, arguments); }`
      : `const ${local} = ${module}.${imported};`,
  );
}

const BUILTINS = new Set(
  builtinModules.flatMap((name) => (name.startsWith("node:") ? [name] : [name, `node:${name}`])),
);

/** `import a, { b, c as d } from "x";`, `import * as a from "x";`, `import "x";` at a statement start. */
const IMPORT =
  /^import\s*(?:([A-Za-z_$][\w$]*)\s*,?\s*)?(?:\{([^}]*)\}|\*\s*as\s+([A-Za-z_$][\w$]*))?\s*(?:from\s*)?"([^"]+)";$/gm;

/** Any ES import or re-export of a built-in that the rewrite left (a form it does not know fails the build). */
const LEFT = /^(?:import|export)[\s{*][^;"']*?(?:from\s*)?"(?:node:)?([a-z_/]+)";$/gm;

/** The chunk with every static import of a Node.js built-in made a getBuiltinModule binding. */
export function rewriteBuiltinImports(code: string, file = "a chunk"): string {
  const rewritten = code.replace(
    IMPORT,
    (line, defaultName: string | undefined, named: string | undefined, namespace: string | undefined, spec: string) => {
      if (!BUILTINS.has(spec)) return line;
      const id = JSON.stringify(spec.startsWith("node:") ? spec : `node:${spec}`);
      const module = `globalThis.process.getBuiltinModule(${id})`;
      const bindings: string[] = [];
      const whole = defaultName ?? namespace;
      if (whole !== undefined) bindings.push(`const ${whole} = ${module};`);
      if (named !== undefined) {
        const names = named
          .split(",")
          .map((part) => part.trim())
          .filter(Boolean)
          .map((part): [string, string] => {
            const match = part.match(/^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/);
            if (match === null) throw new Error(`${file}: cannot rewrite the import of ${spec}: ${line}`);
            return [match[1] as string, match[2] ?? (match[1] as string)];
          });
        if (names.length > 0 && whole === undefined && LAZY.has(JSON.parse(id))) {
          bindings.push(...lazyBindings(module, names));
        } else if (names.length > 0) {
          const pattern = names.map(([imported, local]) => (imported === local ? imported : `${imported}: ${local}`));
          bindings.push(`const { ${pattern.join(", ")} } = ${whole ?? module};`);
        }
      }
      // `import "node:x";` only loads the built-in, which getBuiltinModule does too.
      return bindings.length > 0 ? bindings.join("\n") : `${module};`;
    },
  );
  for (const match of rewritten.matchAll(LEFT)) {
    if (BUILTINS.has(match[1] ?? "")) {
      throw new Error(`${file}: an import of the built-in ${match[1]} is left; update tooling/tsup/node-builtins.ts`);
    }
  }
  return rewritten;
}

/** The tsup plugin: every output chunk's built-in imports rewritten (see above). */
export function builtinsWithoutFacades(): Plugin {
  return {
    name: "nodekit-builtins-without-facades",
    renderChunk(code, chunk) {
      if (!chunk.path.endsWith(".js")) return undefined;
      return { code: rewriteBuiltinImports(code, chunk.path) };
    },
  };
}
