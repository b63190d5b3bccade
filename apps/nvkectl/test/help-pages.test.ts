import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHome, cliHome } from "./helpers.ts";

// The help pages (packages/cli-kit/src/launch/help-page.ts): oclif's help of the root, each
// topic and each command and alias of nvkectl's own, rendered at build time
// (tooling/tsup/help-pages.ts) and printed by the launcher when the start would render the
// same: stdout not a terminal (80 columns, no colour) and, for the root and the topics, no
// user plugin. Each page must be byte for byte what oclif's full start prints, and anything
// that changes oclif's rendering must leave the help to oclif.

const pagesDir = join(repoRoot, "apps/nvkectl/dist/help");
const FULL = { NVKECTL_FULL_START: "1" };
const TRACE = { NODEKIT_TRACE_STARTUP: "1" };
/** Each page's subject ("" for the root) and its file. */
const pages = (await readdir(pagesDir)).map((file) => ({
  id:
    file === "index.txt"
      ? ""
      : file
          .replace(/\.txt$/, "")
          .split(".")
          .join(":"),
  file: join(pagesDir, file),
}));
const argvOf = (id: string) => [...(id === "" ? [] : id.split(":")), "--help"];
const printed = (stderr: string) => /^startup \S+ help page: printed$/m.test(stderr);

let home: CliHome;
let spawned: CliHome;
beforeAll(async () => {
  home = await cliHome("nvkectl-help-pages-");
  spawned = await cliHome("nvkectl-help-pages-spawned-", { spawn: true });
});
afterAll(async () => {
  await home.cleanup();
  await spawned.cleanup();
});

describe("help pages made at build time", () => {
  it("there is one for the root, each topic and each command and alias of nvkectl's own", () => {
    const ids = pages.map((page) => page.id);
    for (const id of ["", "get", "config", "get:clusters", "get:cluster", "install", "__complete"]) {
      expect(ids, id).toContain(id);
    }
    // The core plugins' commands are oclif's to find: no page of theirs.
    expect(ids.filter((id) => id.startsWith("plugins") || id.startsWith("autocomplete"))).toEqual([]);
  });

  it("each is printed for its --help, and is byte for byte what oclif's full start prints", {
    timeout: 300_000,
  }, async () => {
    for (const { id, file } of pages) {
      const argv = argvOf(id);
      const fast = await home.nvkectl(argv, { env: TRACE });
      const full = await home.nvkectl(argv, { env: FULL });
      expect(printed(fast.stderr), `${id}: ${fast.stderr}`).toBe(true);
      expect(full.exitCode, id).toBe(0);
      expect(fast.exitCode, id).toBe(0);
      expect(fast.stdout, id).toBe(full.stdout);
      expect(fast.stdout, id).toBe(await readFile(file, "utf8"));
    }
  });

  it("the root page for the CLI's name alone, -h, and global flags before --help", async () => {
    const root = await readFile(join(pagesDir, "index.txt"), "utf8");
    for (const argv of [[], ["-h"], ["--site", "lab", "--help"], ["-v"]]) {
      const fast = await home.nvkectl(argv, { env: TRACE });
      expect(printed(fast.stderr), argv.join(" ")).toBe(true);
      expect(fast.stdout, argv.join(" ")).toBe(root);
      expect(fast.stdout).toBe((await home.nvkectl(argv, { env: FULL })).stdout);
    }
  });

  it("another width, colour, or a user plugin leaves the help to oclif", { timeout: 120_000 }, async () => {
    const root = await readFile(join(pagesDir, "index.txt"), "utf8");
    const clusters = await readFile(join(pagesDir, "get.clusters.txt"), "utf8");
    // oclif's width: OCLIF_COLUMNS (a terminal's width is the other way, which the pages never serve).
    for (const [argv, page] of [
      [["--help"], root],
      [["get", "clusters", "--help"], clusters],
    ] as const) {
      const wide = await spawned.nvkectl([...argv], { env: { ...TRACE, OCLIF_COLUMNS: "120" } });
      expect(printed(wide.stderr)).toBe(false);
      expect(wide.stdout).not.toBe(page);
      expect(wide.stdout).toBe((await spawned.nvkectl([...argv], { env: { ...FULL, OCLIF_COLUMNS: "120" } })).stdout);
      // supports-color: FORCE_COLOR, or --color on the line, may make oclif's section headers bold.
      const forced = await spawned.nvkectl([...argv], { env: { ...TRACE, FORCE_COLOR: "1" } });
      expect(printed(forced.stderr)).toBe(false);
      expect(forced.stdout).toBe((await spawned.nvkectl([...argv], { env: { ...FULL, FORCE_COLOR: "1" } })).stdout);
      const flag = await spawned.nvkectl([...argv, "--color"], { env: TRACE });
      expect(printed(flag.stderr)).toBe(false);
      expect(flag.stdout).toBe((await spawned.nvkectl([...argv, "--color"], { env: FULL })).stdout);
    }
    // A linked plugin's commands are in the root help: oclif's; the CLI's own command's page stays.
    const env = { XDG_DATA_HOME: join(spawned.path, "data") };
    const fixture = join(repoRoot, "apps/nvkectl/test/fixtures/quiet-plugin");
    const linked = await spawned.nvkectl(["plugins", "link", "--no-install", fixture], { env });
    expect(linked.exitCode, linked.stderr).toBe(0);
    const withPlugin = await spawned.nvkectl(["--help"], { env: { ...env, ...TRACE } });
    expect(printed(withPlugin.stderr)).toBe(false);
    expect(withPlugin.stdout).not.toBe(root);
    expect(withPlugin.stdout).toBe((await spawned.nvkectl(["--help"], { env: { ...env, ...FULL } })).stdout);
    const own = await spawned.nvkectl(["get", "clusters", "--help"], { env: { ...env, ...TRACE } });
    expect(printed(own.stderr)).toBe(true);
    expect(own.stdout).toBe(clusters);
  });
});
