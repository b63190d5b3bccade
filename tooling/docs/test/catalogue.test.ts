import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { ExitCode } from "@nodekit/errors";
import { repoRoot } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { allErrorCodes } from "../catalogue.ts";

/** Every non-test TypeScript source file under `dir`. */
async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && entry.name !== "dist") out.push(...(await sources(path)));
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

async function packageSources(group: "packages" | "apps" | "tooling"): Promise<string[]> {
  const root = join(repoRoot, group);
  const dirs = await readdir(root, { withFileTypes: true });
  const lists = await Promise.all(
    dirs.filter((d) => d.isDirectory()).map((d) => sources(join(root, d.name, "src")).catch(() => [])),
  );
  return lists.flat();
}

describe("the error-code catalogue", () => {
  test("every code is defined once, with a documented exit code and a meaning", () => {
    const codes = allErrorCodes();
    expect(codes.length).toBeGreaterThan(40);
    const exitCodes = new Set<number>(Object.values(ExitCode));
    for (const entry of codes) {
      expect(exitCodes.has(entry.exitCode), entry.code).toBe(true);
      expect(entry.meaning.endsWith("."), `${entry.code}'s meaning ends with a full stop`).toBe(true);
    }
  });

  test("every table the sources define is in the catalogue (which checks each code's name and meaning)", async () => {
    const areas = new Set(allErrorCodes().map((entry) => entry.area));
    const missing: string[] = [];
    const files = [...(await packageSources("packages")), ...(await packageSources("apps"))];
    // @nodekit/errors itself defines none: its mentions are the API's example and README.
    for (const file of files.filter((name) => !name.includes(join("packages", "errors", "src")))) {
      const text = await readFile(file, "utf8");
      for (const match of text.matchAll(/\bdefineErrorCodes\(\s*"([^"]+)"/g)) {
        if (!areas.has(match[1] as string)) missing.push(`${relative(repoRoot, file)}: ${match[1]}`);
      }
    }
    expect(areas.size).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  test("every UserError in the sources is built from a table entry, never from a string", async () => {
    const offenders: string[] = [];
    for (const file of [...(await packageSources("packages")), ...(await packageSources("apps"))]) {
      const text = await readFile(file, "utf8");
      for (const match of text.matchAll(/(?:new UserError|invalidInput)\(\s*([`"'])/g)) {
        const line = text.slice(0, match.index).split("\n").length;
        offenders.push(`${relative(repoRoot, file)}:${line}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  test("no library tells the user to run a CLI command: libraries state facts, the CLIs add hints", async () => {
    const offenders: string[] = [];
    // cli-kit is the CLIs' own kit; its messages name the bin they run in.
    const files = (await packageSources("packages")).filter((file) => !file.includes(`${join("packages", "cli-kit")}`));
    for (const file of files) {
      const lines = (await readFile(file, "utf8")).split("\n");
      lines.forEach((line, index) => {
        if (lines[index - 1]?.includes("names-cli:")) return;
        const code = line.replace(/^\s*(\/\/|\*|\/\*).*$/, "");
        if (
          /["'`][^"'`]*\b(nvkectl|nr) (config|get|create|patch|delete|scale|cluster|sitespec|install|site|release)\b/.test(
            code,
          )
        ) {
          offenders.push(`${relative(repoRoot, file)}:${index + 1}: ${line.trim()}`);
        }
      });
    }
    expect(offenders).toEqual([]);
  });
});
