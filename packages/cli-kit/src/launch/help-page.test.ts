import { testdir } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { helpPage, helpPageFile } from "./help-page.ts";

// When the launcher may print a help page made at build time instead of oclif's rendering:
// only when what oclif's help reads is what it read then. (apps/nvkectl/test/help-pages.test.ts
// compares the built CLI's pages with oclif's full start.)

const AGENT = "demo/1.0.0 linux-x64 node-v22.23.5";
const ROOT_PAGE = `Demo.\n\nVERSION\n  ${AGENT}\n\nUSAGE\n  $ demo [COMMAND]\n\n`;
const pages = { width: 80, userAgent: AGENT };
const quiet = { env: {}, argv: ["node", "demo", "--help"], userAgent: AGENT, stdoutIsTTY: false };

async function cli() {
  return testdir({ [helpPageFile("")]: ROOT_PAGE, [helpPageFile("get:clusters")]: "Get clusters.\n" });
}

describe("helpPage", () => {
  it("names a page's file by its id's words", () => {
    expect(helpPageFile("")).toBe("dist/help/index.txt");
    expect(helpPageFile("get:clusters")).toBe("dist/help/get.clusters.txt");
  });

  it("prints the page when nothing oclif's help reads has changed", async () => {
    const dir = await cli();
    expect(helpPage(dir.root, pages, "get:clusters", quiet)).toBe("Get clusters.\n");
    expect(helpPage(dir.root, pages, "", quiet)).toBe(ROOT_PAGE);
    // No page for it, or no pages at all: oclif's.
    expect(helpPage(dir.root, pages, "get:nodepools", quiet)).toBeUndefined();
    expect(helpPage(dir.root, undefined, "get:clusters", quiet)).toBeUndefined();
  });

  it("leaves the help to oclif for a terminal, another width, or colour", async () => {
    const dir = await cli();
    const page = (options: Partial<typeof quiet>) =>
      helpPage(dir.root, pages, "get:clusters", { ...quiet, ...options });
    expect(page({ stdoutIsTTY: true })).toBeUndefined();
    expect(page({ env: { OCLIF_COLUMNS: "120" } })).toBeUndefined();
    expect(page({ env: { OCLIF_COLUMNS: "" } })).toBe("Get clusters.\n");
    expect(page({ env: { FORCE_COLOR: "0" } })).toBeUndefined();
    expect(page({ argv: ["node", "demo", "get", "clusters", "--help", "--color=256"] })).toBeUndefined();
    expect(page({ argv: ["node", "demo", "get", "clusters", "--no-color", "--help"] })).toBeUndefined();
    expect(helpPage(dir.root, { ...pages, width: 100 }, "get:clusters", quiet)).toBeUndefined();
  });

  it("puts this start's user agent in the root page's VERSION section, when it fits on its line", async () => {
    const dir = await cli();
    const other = "demo/1.0.0 darwin-arm64 node-v24.1.0";
    expect(helpPage(dir.root, pages, "", { ...quiet, userAgent: other })).toBe(ROOT_PAGE.replace(AGENT, other));
    // A command's page shows none.
    expect(helpPage(dir.root, pages, "get:clusters", { ...quiet, userAgent: other })).toBe("Get clusters.\n");
    // Longer than a line (oclif would wrap it), or a page without that line: oclif's.
    expect(helpPage(dir.root, pages, "", { ...quiet, userAgent: `${other} ${"x".repeat(60)}` })).toBeUndefined();
    await dir.write({ [helpPageFile("")]: "Demo.\n" });
    expect(helpPage(dir.root, pages, "", { ...quiet, userAgent: other })).toBeUndefined();
  });
});
