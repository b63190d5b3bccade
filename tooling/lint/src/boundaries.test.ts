import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot, testdir } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";

// Runs biome with the repository's own biome.json over small files laid out like the repository,
// and reads which imports it reports. (biome's JSON reporter is marked experimental: if its shape
// changes, this test fails on the parse, not silently.)

const biome = join(repoRoot, "node_modules", ".bin", "biome");

interface Diagnostic {
  category: string;
  message: string;
  location: { path: string; start: { line: number } };
}

/** The findings of one rule (`lint/<group>/<rule>`) for `files`, as "path:line message". */
async function findings(category: string, files: Record<string, string>): Promise<string[]> {
  const config = JSON.parse(await readFile(join(repoRoot, "biome.json"), "utf8")) as Record<string, unknown>;
  delete config.$schema;
  config.vcs = { enabled: false }; // the temp dir is no git checkout
  const dir = await testdir({ "biome.json": JSON.stringify(config), ...files }, { prefix: "nodekit-lint-" });
  const stdout = await new Promise<string>((resolvePromise, reject) => {
    execFile(biome, ["lint", "--reporter=json", "--max-diagnostics=none", "."], { cwd: dir.path() }, (error, out) => {
      // Exit code 1 is "errors were found"; anything else (or no JSON) is a failure of the run.
      if (error && error.code !== 1) reject(error);
      else resolvePromise(out);
    });
  });
  const report = JSON.parse(stdout) as { diagnostics: Diagnostic[] };
  return report.diagnostics
    .filter((diagnostic) => diagnostic.category === category)
    .map((d) => `${d.location.path}:${d.location.start.line} ${d.message.split(":")[0]}`) // the message up to its first colon
    .sort();
}

/** The noRestrictedImports findings for `files`. */
const restrictedImports = (files: Record<string, string>) => findings("lint/style/noRestrictedImports", files);

const oclif = [
  'import type { Config } from "@oclif/core";',
  'import { Command } from "@oclif/core";',
  'export { Flags } from "@oclif/core/flags";',
  'export const load = () => import("@oclif/plugin-plugins");',
  "export type { Config };",
  "export { Command };",
  "",
].join("\n");
const cliKit = [
  'import { out } from "@nodekit/cli-kit";',
  'import { run } from "@nodekit/cli-kit/run";',
  "export { out, run };",
  "",
].join("\n");
const allowed = [
  'import * as z from "zod";',
  'import { execa } from "execa";',
  'import { UserError } from "@nodekit/errors";',
  "export { execa, UserError, z };",
  "",
].join("\n");
const library = "A library (packages/*) works without a CLI (LIB-1)";

describe("biome: libraries (packages/*) import neither oclif nor cli-kit", () => {
  test("a library importing @oclif/* or @nodekit/cli-kit (any form, any subpath) is reported, line by line", async () => {
    const found = await restrictedImports({
      "packages/lib/src/oclif.ts": oclif,
      "packages/lib/src/cli-kit.ts": cliKit,
      "packages/lib/src/allowed.ts": allowed,
    });
    expect(found).toEqual(
      [
        `packages/lib/src/cli-kit.ts:1 ${library}`,
        `packages/lib/src/cli-kit.ts:2 ${library}`,
        `packages/lib/src/oclif.ts:1 ${library}`,
        `packages/lib/src/oclif.ts:2 ${library}`,
        `packages/lib/src/oclif.ts:3 ${library}`,
        `packages/lib/src/oclif.ts:4 ${library}`,
      ].sort(),
    );
  });

  test("cli-kit itself, the apps and tooling may import them", async () => {
    const found = await restrictedImports({
      "packages/cli-kit/src/command.ts": oclif,
      "apps/cli/src/commands/get.ts": oclif,
      "apps/cli/src/services/get.ts": cliKit,
      "tooling/docs/generate.ts": oclif,
    });
    expect(found).toEqual([]);
  });

  test("the zod rule still holds inside libraries (the override keeps it)", async () => {
    const found = await restrictedImports({
      "packages/lib/src/schema.ts": 'import { z } from "zod";\nexport { z };\n',
    });
    expect(found).toEqual(['packages/lib/src/schema.ts:1 Import zod as `import * as z from "zod"`']);
  });
});

describe("biome: no import circles", () => {
  test("a circle is reported, also when one side is a type import and the other a dynamic import", async () => {
    const found = await findings("lint/suspicious/noImportCycles", {
      "packages/lib/src/run.ts":
        'export async function run() {\n  const { fast } = await import("./fast.ts");\n  return fast;\n}\nexport type Plan = { kind: "fast" };\n',
      "packages/lib/src/fast.ts":
        'import type { Plan } from "./run.ts";\nexport const fast: Plan = { kind: "fast" };\n',
      "packages/lib/src/alone.ts": 'import { fast } from "./fast.ts";\nexport const alone = fast;\n',
    });
    expect(found.map((line) => line.split(" ")[0])).toEqual([
      "packages/lib/src/fast.ts:1",
      "packages/lib/src/run.ts:2",
    ]);
  });
});
