import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { sortEntryPoints } from "../../../tooling/tsup/base.ts";
import { asciiOnly, eagerModuleBodies, planHotChunk, sortKeys } from "../../../tooling/tsup/hot-chunk.ts";
import { rewriteBuiltinImports } from "../../../tooling/tsup/node-builtins.ts";

// The build's rewrite of Node.js built-in imports (tooling/tsup/node-builtins.ts), on the
// forms esbuild emits; the whole bundle is checked in startup.test.ts.

describe("rewriteBuiltinImports", () => {
  it("binds named, aliased, default and namespace imports to process.getBuiltinModule", () => {
    const code = [
      'import { readFile, stat as lstat2 } from "fs/promises";',
      'import fs4, { constants as fsConstants } from "node:fs";',
      'import * as path from "path";',
      'import {\n  homedir\n} from "os";',
      'import "node:net";',
      'import { a } from "./chunk-ABC.js";',
      'import yaml from "js-yaml";',
    ].join("\n");
    expect(rewriteBuiltinImports(code)).toBe(
      [
        'const { readFile, stat: lstat2 } = globalThis.process.getBuiltinModule("node:fs/promises");',
        'const fs4 = globalThis.process.getBuiltinModule("node:fs");',
        "const { constants: fsConstants } = fs4;",
        'const path = globalThis.process.getBuiltinModule("node:path");',
        'const { homedir } = globalThis.process.getBuiltinModule("node:os");',
        'globalThis.process.getBuiltinModule("node:net");',
        'import { a } from "./chunk-ABC.js";',
        'import yaml from "js-yaml";',
      ].join("\n"),
    );
  });

  it("binds node:crypto's functions to load it on their first call: a start that never hashes never loads it", () => {
    const code = rewriteBuiltinImports('import { createHash, randomBytes as bytes, KeyObject } from "node:crypto";');
    expect(code).toBe(
      [
        'function createHash() { return globalThis.process.getBuiltinModule("node:crypto").createHash.apply(this, arguments); }',
        'function bytes() { return globalThis.process.getBuiltinModule("node:crypto").randomBytes.apply(this, arguments); }',
        'const KeyObject = globalThis.process.getBuiltinModule("node:crypto").KeyObject;',
      ].join("\n"),
    );
    const { createHash, bytes } = new Function(`${code}\nreturn { createHash, bytes };`)() as {
      createHash: typeof import("node:crypto").createHash;
      bytes: typeof import("node:crypto").randomBytes;
    };
    expect(createHash("sha256").update("a").digest("hex")).toBe(
      "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
    );
    expect(bytes(6)).toHaveLength(6);
  });

  it("fails the build on a form of built-in import it does not rewrite", () => {
    expect(() => rewriteBuiltinImports('export { readFile } from "node:fs/promises";', "dist/x.js")).toThrow(
      /dist\/x\.js: an import of the built-in fs\/promises is left/,
    );
  });

  it("leaves a chunk without built-in imports as it is", () => {
    const code = 'import { x } from "./chunk-A.js";\nexport { x };\n';
    expect(rewriteBuiltinImports(code)).toBe(code);
  });
});

// The merge of a hot path's chunks into one file (tooling/tsup/hot-chunk.ts), planned from a
// metafile shaped like esbuild's; the built CLI's files are checked in startup.test.ts.
describe("planHotChunk", () => {
  const output = (inputs: string[], imports: string[] = [], entryPoint?: string) => ({
    ...(entryPoint === undefined ? {} : { entryPoint }),
    inputs: Object.fromEntries(inputs.map((input) => [input, { bytesInOutput: 1 }])),
    imports: imports
      .map((path) => ({ path, kind: path.startsWith("dyn:") ? "dynamic-import" : "import-statement" }))
      .map((i) => ({ ...i, path: i.path.replace(/^dyn:/, "") })),
  });
  const meta = {
    outputs: {
      "dist/launch.js": output(["src/launch.ts"], ["dist/chunk-HELPERS1.js"], "src/launch.ts"),
      "dist/chunk-HELPERS1.js": output([]),
      "dist/run.js": output(["src/run.ts"], ["dist/chunk-ARGV0001.js", "dyn:dist/fast-FAST0001.js"], "src/run.ts"),
      "dist/chunk-ARGV0001.js": output(["src/argv.ts"], ["dist/chunk-HELPERS1.js"]),
      "dist/fast-FAST0001.js": output(
        ["src/fast.ts"],
        ["dist/chunk-ARGV0001.js", "dist/chunk-CORE0001.js"],
        "src/fast.ts",
      ),
      "dist/chunk-CORE0001.js": output(["src/core.ts"], ["dist/chunk-HELPERS1.js", "yaml"]),
      "dist/commands/get.js": output(
        ["src/commands/get.ts"],
        ["dist/chunk-CORE0001.js", "dyn:dist/site-SITE0001.js"],
        "src/commands/get.ts",
      ),
      // esbuild's facade for import() of a module another chunk holds.
      "dist/site-SITE0001.js": output([], ["dist/chunk-SITE0002.js"], "src/site.ts"),
      "dist/chunk-SITE0002.js": output(["src/site.ts"], ["dist/chunk-CORE0001.js"]),
      "dist/commands/cold.js": output(["src/commands/cold.ts"], ["dist/chunk-COLD0001.js"], "src/commands/cold.ts"),
      "dist/chunk-COLD0001.js": output(["src/cold.ts"], ["dist/chunk-CORE0001.js"]),
      "dist/chunk-HELPERS1.css": output([]),
    },
  };

  it("keeps the entries, gives the bin's first steps chunks of their own, and merges the hot path's chunks", () => {
    const plan = planHotChunk(meta, { hot: ["src/fast.ts", "src/site.ts", "src/commands/get.ts"] });
    expect(Object.fromEntries(plan.entries)).toEqual({
      launch: "dist/launch.js",
      run: "dist/run.js",
      "commands/get": "dist/commands/get.js",
      "commands/cold": "dist/commands/cold.js",
    });
    expect(Object.fromEntries(plan.manual)).toEqual({
      "dist/chunk-HELPERS1.js": "launch-imports",
      "dist/chunk-ARGV0001.js": "run-imports",
      "dist/fast-FAST0001.js": "hot",
      "dist/chunk-CORE0001.js": "hot",
      "dist/site-SITE0001.js": "hot",
      "dist/chunk-SITE0002.js": "hot",
    });
  });

  // esbuild's metafile lists the same outputs in another order from build to build
  // (evanw/esbuild#1766); the order of the entries is rollup's, and so the bundle's.
  it("plans the same entries, in the same order, whatever the order of the metafile's keys", () => {
    const options = { hot: ["src/fast.ts", "src/site.ts", "src/commands/get.ts"] };
    const reversed = { outputs: Object.fromEntries(Object.entries(meta.outputs).reverse()) };
    const plan = planHotChunk(meta, options);
    const again = planHotChunk(reversed, options);
    expect([...again.entries]).toEqual([...plan.entries]);
    expect(new Map([...again.manual].sort())).toEqual(new Map([...plan.manual].sort()));
    expect(Object.keys(sortKeys(reversed).outputs)).toEqual(Object.keys(sortKeys(meta).outputs));
  });

  it("fails the build when a hot module is in no output (a renamed or removed file)", () => {
    expect(() => planHotChunk(meta, { hot: ["src/fast.ts", "src/gone.ts"] })).toThrow(
      /no output holds src\/gone\.ts: fix the CLI's tsup\.config\.ts/,
    );
  });
});

describe("eagerModuleBodies", () => {
  it("makes each CommonJS and lazy ES module body a parenthesized function (compiled at load), nothing else", async () => {
    const { rollup } = await import("rollup");
    const source = [
      "const __commonJS = (cb, mod) => () => (mod || (0, cb[Object.keys(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports);",
      "const __esm = (fn, res) => () => (fn && (res = (0, fn[Object.keys(fn)[0]])((fn = 0))), res);",
      'var require_a = __commonJS({ "node_modules/a/index.js"(exports, module) { module.exports = { a: () => 1 }; } });',
      'var value; var init_b = __esm({ "src/b.ts"() { value = require_a().a() + 1; } });',
      "const other = { method(x) { return x; } };",
      "init_b();",
      "export { value, other };",
    ].join("\n");
    const bundle = await rollup({
      input: "entry",
      treeshake: false,
      plugins: [
        { name: "virtual", resolveId: (id) => id, load: () => source },
        eagerModuleBodies((id) => id === "entry"),
      ],
    });
    const { output } = await bundle.generate({ format: "es" });
    const [{ code }] = output;
    expect(code).toContain(
      '"node_modules/a/index.js": (function(exports, module) { module.exports = { a: () => 1 }; })',
    );
    expect(code).toContain('"src/b.ts": (function() { value = require_a().a() + 1; })');
    expect(code).toContain("method(x) { return x; }");
    const module = (await import(`data:text/javascript,${encodeURIComponent(code)}`)) as { value: number };
    expect(module.value).toBe(2);
  });
});

// The hot file is written in ASCII (the launcher reads it as Latin-1): the same program.
describe("asciiOnly", () => {
  it("writes each character past ASCII as its escape, which means the same in strings, templates and patterns", () => {
    const code =
      'const a = "2 \u2026 3 \u00d7";\nconst b = `\u2014` + a;\nconst c = /[\u2026]/;\n// \u2248 5 ms\nmodule.exports = { a, b, c };\n';
    const escaped = asciiOnly(code);
    expect(escaped).not.toMatch(/[\u0080-\uffff]/);
    const run = (source: string) => {
      const module = { exports: {} as { a: string; b: string; c: RegExp } };
      new Function("module", source)(module);
      return module.exports;
    };
    const [before, after] = [run(code), run(escaped)];
    expect(after.a).toBe(before.a);
    expect(after.b).toBe(before.b);
    expect(after.c.test("\u2026")).toBe(true);
    expect(asciiOnly("const x = 1;\n")).toBe("const x = 1;\n");
    expect(() => asciiOnly("String.raw`\u2026`")).toThrow(/String\.raw/);
    expect(asciiOnly('new RegExp(String.raw`(?<!\\\\)x`); "\u2026"')).toBe(
      'new RegExp(String.raw`(?<!\\\\)x`); "\\u2026"',
    );
  });
});

// The same sources build the same files: the order tsup's glob found the entries in, and the
// order `oclif manifest` found the commands in, change from build to build.
describe("a reproducible build", () => {
  it("gives esbuild its entry points sorted, leaving an entry a plugin adds alone", () => {
    const options: { entryPoints?: unknown } = {
      entryPoints: ["src/run.ts", "src/commands/b.ts", "src/commands/a.ts"],
    };
    sortEntryPoints(options);
    expect(options.entryPoints).toEqual(["src/commands/a.ts", "src/commands/b.ts", "src/run.ts"]);
    const withObject = { entryPoints: ["b.ts", { in: "heavy", out: "heavy" }, "a.ts"] };
    sortEntryPoints(withObject);
    expect(withObject.entryPoints).toEqual(["b.ts", { in: "heavy", out: "heavy" }, "a.ts"]);
  });

  it("writes each CLI's manifest with its commands in sorted order", async () => {
    for (const cli of ["nvkectl", "nr"]) {
      const manifest = JSON.parse(await readFile(join(repoRoot, "apps", cli, "oclif.manifest.json"), "utf8")) as {
        commands: Record<string, unknown>;
      };
      const ids = Object.keys(manifest.commands);
      expect(ids.length, cli).toBeGreaterThan(1);
      expect(ids, cli).toEqual([...ids].sort());
    }
  });
});
