import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

// Each workspace library has one entry point, src/index.ts, that re-exports its modules. With
// code splitting esbuild assigns a file to the chunk of every entry that reaches it through
// *any* import, re-exports included, before it drops unused code: one `import { launch } from
// "@nodekit/cli-kit"` in the bin's entry puts every module cli-kit's index names (oclif's
// command class, the printer, …) in a chunk the bin loads, and one read of the site config
// brings js-yaml along with the file reader. So the bundle imports each name from the module
// that defines it, as a bundler's barrel optimisation does (Next.js's optimizePackageImports):
// this esbuild plugin rewrites `import { a, type B } from "@nodekit/x"` (and `export { … } from`)
// in the workspace's TypeScript to imports of the files x's index takes a's from (types, which
// load nothing, are dropped). Names it cannot place stay on the index.

/** `import { … } from "@nodekit/x";` or `export { … } from "@nodekit/x";` (one statement, any line breaks). */
const STATEMENT = /^(import|export)(\s+type)?\s*\{([^}]*)\}\s*from\s*"(@nodekit\/[\w-]+)";/gm;

/** Where an index takes a name from: the defining file and the name there. */
interface Origin {
  file: string;
  name: string;
}

/** The names a module exports, each with the file and name it comes from (following re-exports). */
async function exportsOf(file: string, seen = new Set<string>()): Promise<Map<string, Origin>> {
  const names = new Map<string, Origin>();
  if (seen.has(file)) return names;
  seen.add(file);
  const source = await readFile(file, "utf8");
  for (const match of source.matchAll(
    /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|abstract\s+class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm,
  )) {
    names.set(match[1] as string, { file, name: match[1] as string });
  }
  for (const match of source.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*"(\.[^"]+)";/gm)) {
    const from = resolve(dirname(file), match[2] as string);
    const inner = await exportsOf(from, seen);
    for (const specifier of specifiers(match[1] as string)) {
      names.set(specifier.alias, inner.get(specifier.name) ?? { file: from, name: specifier.name });
    }
  }
  for (const match of source.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\};/gm)) {
    for (const specifier of specifiers(match[1] as string)) names.set(specifier.alias, { file, name: specifier.name });
  }
  for (const match of source.matchAll(/^export\s*\*\s*from\s*"(\.[^"]+)";/gm)) {
    for (const [name, origin] of await exportsOf(resolve(dirname(file), match[1] as string), seen)) {
      if (!names.has(name)) names.set(name, origin);
    }
  }
  return names;
}

interface Specifier {
  type: boolean;
  name: string;
  alias: string;
}

/** `a, type B, c as d` → its specifiers. */
function specifiers(list: string): Specifier[] {
  return list
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const match = /^(type\s+)?([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(part);
      if (match === null) throw new Error(`past-indexes: cannot read the import specifier "${part}"`);
      return { type: match[1] !== undefined, name: match[2] as string, alias: match[3] ?? (match[2] as string) };
    });
}

/**
 * `source` with each import from a workspace package's index made an import of the files that
 * define the names. `originsOf` gives what a package's index exports, by name (or undefined:
 * the statement is left as it is).
 */
async function importPastIndexes(
  source: string,
  originsOf: (specifier: string) => Promise<Map<string, Origin> | undefined>,
): Promise<string> {
  const statements = [...source.matchAll(STATEMENT)];
  if (statements.length === 0) return source;
  let out = source;
  for (const statement of statements.reverse()) {
    const [text, keyword, typeOnly, list, specifier] = statement as unknown as [string, string, string, string, string];
    const origins = typeOnly === undefined ? await originsOf(specifier) : undefined;
    if (origins === undefined) continue;
    const byFile = new Map<string, string[]>();
    const left: string[] = [];
    for (const item of specifiers(list)) {
      // A type names no module to load (and `import { type A } from "m"` would still load m).
      if (item.type) continue;
      const origin = origins.get(item.name);
      const name = origin?.name ?? item.name;
      const written = `${name}${name === item.alias ? "" : ` as ${item.alias}`}`;
      if (origin === undefined) left.push(written);
      else byFile.set(origin.file, [...(byFile.get(origin.file) ?? []), written]);
    }
    const lines = [...byFile].map(
      ([file, names]) => `${keyword} { ${names.join(", ")} } from ${JSON.stringify(file)};`,
    );
    if (left.length > 0) lines.push(`${keyword} { ${left.join(", ")} } from "${specifier}";`);
    const at = statement.index ?? 0;
    out = out.slice(0, at) + lines.join("\n") + out.slice(at + text.length);
  }
  return out;
}

/** The esbuild plugin: the workspace's own TypeScript imports each library name from its defining file. */
export function importsPastIndexes(): Plugin {
  return {
    name: "nodekit-imports-past-indexes",
    setup(build) {
      // Each index is read once a build (a rebuild in watch mode reads them again).
      let indexes = new Map<string, Promise<Map<string, Origin>>>();
      build.onStart(() => {
        indexes = new Map();
      });
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes("/node_modules/")) return undefined;
        const source = await readFile(args.path, "utf8");
        const rewritten = await importPastIndexes(source, async (specifier) => {
          const found = await build.resolve(specifier, { kind: "import-statement", resolveDir: dirname(args.path) });
          if (found.errors.length > 0 || !found.path.endsWith("/src/index.ts")) return undefined;
          if (!indexes.has(found.path)) indexes.set(found.path, exportsOf(found.path));
          return indexes.get(found.path);
        });
        return rewritten === source ? undefined : { contents: rewritten, loader: "ts" };
      });
    },
  };
}
