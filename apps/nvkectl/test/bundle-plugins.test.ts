import { describe, expect, it } from "vitest";
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
