import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot, tempDir } from "@nodekit/test-utils";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltExecutable, cachedExecutables } from "../src/sea.ts";

// `pnpm package`: nvkectl and nr as single executable applications for linux-x64 and
// linux-arm64 (the build the sandbox's release carries: cachedExecutables builds it once for
// each content of the built CLIs), the x64 ones run as on a machine with no Node.js at all:
// an empty environment (env -i) whose PATH has no node.

let work: string;
let cleanup: () => Promise<void>;
let built: BuiltExecutable[];
let out: string;
const MB = 1024 * 1024;

beforeAll(async () => {
  ({ path: work, cleanup } = await tempDir("sea-"));
  ({ dir: out, built } = await cachedExecutables());
}, 15 * 60_000);
afterAll(() => cleanup?.());

/** Runs an executable under `env -i` with HOME in the test's directory and a PATH holding nothing. */
async function bare(file: string, args: string[]) {
  const home = join(work, "home");
  const empty = join(work, "empty-bin");
  await mkdir(empty, { recursive: true });
  return execa("env", ["-i", `HOME=${home}`, `PATH=${empty}`, file, ...args], { reject: false });
}

describe.runIf(process.arch === "x64")("single executables, linux-x64", () => {
  it("SHA256SUMS names each, both platforms, with its digest", async () => {
    const sums = (await execa("cat", [join(out, "SHA256SUMS")])).stdout;
    expect(built.map((b) => `${b.bin}-linux-${b.arch}`).sort()).toEqual([
      "nr-linux-arm64",
      "nr-linux-x64",
      "nvkectl-linux-arm64",
      "nvkectl-linux-x64",
    ]);
    for (const b of built) expect(sums).toContain(`${b.sha256}  ${b.bin}-linux-${b.arch}`);
    // sha256sum checks the x64 pair, the ones run below (hashing all four, 440 MB, would be most of this tier).
    const x64 = sums
      .split("\n")
      .filter((line) => line.endsWith("-linux-x64"))
      .join("\n");
    const check = await execa("sha256sum", ["--check", "--strict", "-"], {
      cwd: out,
      input: `${x64}\n`,
      reject: false,
    });
    expect(check.exitCode, check.stderr).toBe(0);
  });

  // What would make two checkouts of the same sources build different executables: the path
  // the blob was made from (its main script's), and pnpm's record of when it deployed the package.
  it("holds no path of the checkout that built it, and no pnpm bookkeeping", async () => {
    for (const b of built.filter((b) => b.arch === "x64")) {
      const content = await readFile(b.file);
      expect(content.indexOf(repoRoot), b.bin).toBe(-1);
      expect(content.indexOf(".pnpm-workspace-state"), b.bin).toBe(-1);
    }
  });

  for (const bin of ["nvkectl", "nr"]) {
    it(`${bin}: --version and --help with no node on PATH, within 130 MB`, async () => {
      const file = built.find((b) => b.bin === bin && b.arch === "x64")?.file ?? "";
      expect((await bare("/bin/sh", ["-c", "command -v node || echo none"])).stdout).toBe("none");
      const version = await bare(file, ["--version"]);
      expect(version.stderr).toBe("");
      expect(version.stdout).toMatch(new RegExp(`^@nodekit/${bin}/\\d+\\.\\d+\\.\\d+ linux-x64 node-v22\\.`));
      // Again, from the extracted copy.
      expect((await bare(file, ["--version"])).stdout).toBe(version.stdout);
      const help = await bare(file, ["--help"]);
      expect(help.exitCode, help.stderr).toBe(0);
      expect(help.stdout).toContain(bin === "nr" ? "cluster" : "install");
      expect((await stat(file)).size).toBeLessThanOrEqual(130 * MB);
    }, 120_000);
  }

  it("a second call reuses the cached build: the same directory and files, nothing rebuilt", async () => {
    const again = await cachedExecutables();
    expect(again.reused).toBe(true);
    expect(again.dir).toBe(out);
    expect(again.built).toEqual(built);
  });

  it("nvkectl's executable carries its deploy path, written to a private directory of the user's cache", async () => {
    const sea = join(work, "home", ".cache", "nodekit", "executables");
    const [extracted] = (await readdir(sea)).filter((name) => name.startsWith("@nodekit+nvkectl-"));
    expect(extracted).toBeDefined();
    expect((await stat(join(sea, extracted ?? "", "deploy/nico/nvke-deploy.yaml"))).isFile()).toBe(true);
    expect((await stat(sea)).mode & 0o077).toBe(0);
  });
});
