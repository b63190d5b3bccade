import { spawnSync } from "node:child_process";
import { chmod, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
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

// On a terminal, or at another width, oclif renders the help; the page it wrote is kept in the
// CLI's cache directory and printed by the next start that would render the same
// (packages/cli-kit/src/launch/help-cache.ts): byte for byte oclif's rendering, or oclif renders.
describe("help pages kept at run time (a terminal, another width)", () => {
  const kept = (stderr: string) => /^startup \S+ kept help page: printed$/m.test(stderr);
  const keptDir = () => join(spawned.path, "cache/nvkectl/help");
  const keptFiles = async () => (await readdir(keptDir())).filter((file) => file.endsWith(".bin")).sort();
  const subjects = [["--help"], ["get", "--help"], ["get", "clusters", "--help"]];

  it("the second start prints what oclif rendered, byte for byte: the root, a topic and a command at two widths; another width misses", {
    timeout: 300_000,
  }, async () => {
    const pages = new Set<string>();
    for (const width of ["100", "132"]) {
      for (const argv of subjects) {
        const env = { OCLIF_COLUMNS: width };
        const oclif = await spawned.nvkectl(argv, { env: { ...env, ...FULL } });
        expect(oclif.exitCode, oclif.stderr).toBe(0);
        const first = await spawned.nvkectl(argv, { env: { ...env, ...TRACE } });
        expect(kept(first.stderr), `${argv.join(" ")} at ${width}: ${first.stderr}`).toBe(false);
        expect(first.stdout).toBe(oclif.stdout);
        // A run with the trace on writes to stderr: a quiet one keeps the page.
        const quiet = await spawned.nvkectl(argv, { env });
        expect(quiet.stdout).toBe(oclif.stdout);
        const second = await spawned.nvkectl(argv, { env: { ...env, ...TRACE } });
        expect(kept(second.stderr), `${argv.join(" ")} at ${width}: ${second.stderr}`).toBe(true);
        expect(second.exitCode).toBe(0);
        expect(second.stdout).toBe(oclif.stdout);
        pages.add(second.stdout);
      }
    }
    expect(pages.size).toBe(6);
    expect(await keptFiles()).toHaveLength(6);
  });

  it("a damaged page, or one kept for another key, is ignored: oclif renders", { timeout: 120_000 }, async () => {
    await rm(keptDir(), { recursive: true, force: true });
    const env = { OCLIF_COLUMNS: "100" };
    for (const argv of subjects) await spawned.nvkectl(argv, { env });
    const oclif = await spawned.nvkectl(["get", "clusters", "--help"], { env: { ...env, ...FULL } });
    const root = await spawned.nvkectl(["--help"], { env: { ...env, ...FULL } });
    const before = await keptFiles();
    // Every page's byte near its end flipped (the page's text, behind the header and the key).
    for (const file of before) {
      const bytes = await readFile(join(keptDir(), file));
      bytes[bytes.length - 2] = (bytes[bytes.length - 2] ?? 0) ^ 0x01;
      await writeFile(join(keptDir(), file), bytes, { mode: 0o600 });
    }
    const damaged = await spawned.nvkectl(["get", "clusters", "--help"], { env: { ...env, ...TRACE } });
    expect(kept(damaged.stderr)).toBe(false);
    expect(damaged.stdout).toBe(oclif.stdout);
    // Written again by a quiet run; then the root page's file put in its place: another key.
    await spawned.nvkectl(["get", "clusters", "--help"], { env });
    await spawned.nvkectl(["--help"], { env });
    const after = await keptFiles();
    const holding = async (text: string) => {
      for (const file of after) if ((await readFile(join(keptDir(), file), "latin1")).includes(text)) return file;
      throw new Error(`no kept page holds ${text}`);
    };
    const clustersFile = await holding('","get:clusters","@nodekit/nvkectl/');
    await rename(join(keptDir(), await holding('","","@nodekit/nvkectl/')), join(keptDir(), clustersFile));
    const foreign = await spawned.nvkectl(["get", "clusters", "--help"], { env: { ...env, ...TRACE } });
    expect(kept(foreign.stderr)).toBe(false);
    expect(foreign.stdout).toBe(oclif.stdout);
    expect(foreign.stdout).not.toBe(root.stdout);
  });

  it("is neither read nor kept in a directory others can write to", { timeout: 120_000 }, async () => {
    const env = { OCLIF_COLUMNS: "100" };
    const argv = ["get", "clusters", "--help"];
    await spawned.nvkectl(argv, { env });
    expect(kept((await spawned.nvkectl(argv, { env: { ...env, ...TRACE } })).stderr)).toBe(true);
    await chmod(keptDir(), 0o770);
    const open = await spawned.nvkectl(argv, { env: { ...env, ...TRACE } });
    expect(kept(open.stderr)).toBe(false);
    expect(open.stdout).toBe((await spawned.nvkectl(argv, { env: { ...env, ...FULL } })).stdout);
    await chmod(keptDir(), 0o700);
  });

  it("on a pseudo-terminal (script), in colour, at two widths: the second start prints oclif's rendering", {
    timeout: 120_000,
  }, async () => {
    const bin = join(repoRoot, "apps/nvkectl/bin/run.js");
    const home = await cliHome("nvkectl-help-pty-");
    try {
      const onTerminal = (columns: number, argv: string[], env: Record<string, string> = {}) => {
        const line = [process.execPath, bin, ...argv].map((word) => `'${word}'`).join(" ");
        const result = spawnSync("script", ["-qec", `stty cols ${columns} rows 40; exec ${line}`, "/dev/null"], {
          encoding: "utf8",
          env: { PATH: process.env.PATH ?? "", TERM: "xterm-256color", ...home.env, ...env },
          stdio: ["ignore", "pipe", "pipe"],
        });
        expect(result.status, result.stderr).toBe(0);
        return result.stdout;
      };
      for (const columns of [90, 140]) {
        for (const argv of [["--help"], ["get", "clusters", "--help"]]) {
          const oclif = onTerminal(columns, argv, FULL);
          // Bold section headers: colour is on.
          expect(oclif).toContain("\u001b[1m");
          expect(onTerminal(columns, argv)).toBe(oclif);
          const second = onTerminal(columns, argv, TRACE);
          expect(kept(second.replaceAll("\r\n", "\n")), `${argv.join(" ")} at ${columns}`).toBe(true);
          expect(second.replace(/^startup [^\n]*\r\n/gm, "")).toBe(oclif);
        }
      }
      expect(
        (await readdir(join(home.path, "cache/nvkectl/help"))).filter((file) => file.endsWith(".bin")),
      ).toHaveLength(4);
    } finally {
      await home.cleanup();
    }
  });
});
