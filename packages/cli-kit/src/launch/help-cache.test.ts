import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isatty } from "node:tty";
import { describe, expect, it, onTestFinished } from "vitest";
import { type HelpStart, helpCacheDir, helpCacheKey, keptHelpPage } from "./help-cache.ts";

const helpCache = join(import.meta.dirname, "help-cache.ts");

// A help run: records what it writes to stdout (in pieces, strings and bytes), perhaps a line
// on stderr, ends with the exit code asked for, and keeps the page when that allows.
const RUNNER = `import { recordHelpPage } from ${JSON.stringify(helpCache)};
const [dir, build, key, exitCode, stderr] = process.argv.slice(2);
const keep = recordHelpPage(dir, build, key);
process.stdout.write("USAGE\\n  $ cli get clusters — «wide» ");
process.stdout.write(Buffer.from("\\u001b[1mFLAGS\\u001b[22m\\n"));
console.log("  -o, --output=<option>");
if (stderr === "yes") process.stderr.write("warning: something\\n");
process.exitCode = Number(exitCode);
keep();
`;
const PAGE = "USAGE\n  $ cli get clusters — «wide» \u001b[1mFLAGS\u001b[22m\n  -o, --output=<option>\n";

function fixture() {
  const root = mkdtempSync(join(tmpdir(), "help-cache-"));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "runner.mjs"), RUNNER);
  const dir = helpCacheDir("cli", { XDG_CACHE_HOME: join(root, "cache") }) as string;
  const run = (key: string, options: { build?: string; exitCode?: number; stderr?: boolean } = {}) => {
    const result = spawnSync(
      process.execPath,
      [
        join(root, "runner.mjs"),
        dir,
        options.build ?? "b1",
        key,
        String(options.exitCode ?? 0),
        options.stderr ? "yes" : "no",
      ],
      { encoding: "utf8" },
    );
    expect(result.status, result.stderr).toBe(options.exitCode ?? 0);
    expect(result.stdout).toBe(PAGE);
  };
  const files = () => (existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith(".bin")) : []);
  return { root, dir, run, files };
}

describe("the help pages kept at run time", () => {
  it("keeps the bytes a help wrote to stdout after exit code 0, 0600 in a 0700 directory, for its key only", () => {
    const { dir, run, files } = fixture();
    expect(dir).toMatch(/[\\/]cache[\\/]cli[\\/]help$/);
    expect(keptHelpPage(dir, "b1", "key-80")).toBeUndefined();
    run("key-80");
    expect(keptHelpPage(dir, "b1", "key-80")?.toString("utf8")).toBe(PAGE);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const [file] = files();
    expect(statSync(join(dir, file as string)).mode & 0o777).toBe(0o600);
    // Another key (another width, colour, subject) and another build miss.
    expect(keptHelpPage(dir, "b1", "key-120")).toBeUndefined();
    expect(keptHelpPage(dir, "b2", "key-80")).toBeUndefined();
  });

  it("keeps nothing after another exit code or a word on stderr", () => {
    const { dir, run, files } = fixture();
    run("key", { exitCode: 1 });
    run("key", { stderr: true });
    expect(files()).toEqual([]);
    expect(keptHelpPage(dir, "b1", "key")).toBeUndefined();
  });

  it("ignores a damaged page (and removes it) and a page another key's file holds", () => {
    const { dir, run, files } = fixture();
    run("key-a");
    const [a] = files();
    const good = readFileSync(join(dir, a as string));
    for (const at of [0, 22, good.length - 3]) {
      const bad = Buffer.from(good);
      bad[at] = (bad[at] ?? 0) ^ 0x20;
      writeFileSync(join(dir, a as string), bad, { mode: 0o600 });
      expect(keptHelpPage(dir, "b1", "key-a"), `byte ${at}`).toBeUndefined();
      expect(existsSync(join(dir, a as string)), `byte ${at}`).toBe(false);
    }
    // key-b's page, put where key-a's is looked for: its key is not key-a.
    run("key-b");
    const [b] = files();
    renameSync(join(dir, b as string), join(dir, a as string));
    expect(keptHelpPage(dir, "b1", "key-a")).toBeUndefined();
  });

  it("is neither read nor written in a directory others can write to or enter, nor through a link", () => {
    const { root, dir, run, files } = fixture();
    run("key");
    expect(keptHelpPage(dir, "b1", "key")).toBeDefined();
    for (const mode of [0o770, 0o755, 0o702]) {
      chmodSync(dir, mode);
      expect(keptHelpPage(dir, "b1", "key"), mode.toString(8)).toBeUndefined();
      rmSync(join(dir, files()[0] as string));
      run("key");
      expect(files(), mode.toString(8)).toEqual([]);
      chmodSync(dir, 0o700);
      run("key");
    }
    // Below a directory others can write to: another user could put a directory of theirs in its place.
    chmodSync(join(dir, ".."), 0o777);
    expect(keptHelpPage(dir, "b1", "key")).toBeUndefined();
    chmodSync(join(dir, ".."), 0o700);
    const [file] = files();
    const elsewhere = join(root, "elsewhere.bin");
    renameSync(join(dir, file as string), elsewhere);
    symlinkSync(elsewhere, join(dir, file as string));
    expect(keptHelpPage(dir, "b1", "key")).toBeUndefined();
    // The directory itself a link to a private one: not used either.
    rmSync(join(dir, file as string));
    renameSync(elsewhere, join(dir, file as string));
    renameSync(dir, join(root, "real"));
    symlinkSync(join(root, "real"), dir);
    expect(keptHelpPage(dir, "b1", "key")).toBeUndefined();
  });

  it("keeps 64 pages of a build, the latest written, and the pages of the two other builds written last", () => {
    const { dir, run, files } = fixture();
    run("first");
    const first = join(dir, files()[0] as string);
    utimesSync(first, new Date(), new Date(Date.now() - 1000 * 60_000));
    const old = (build: string, n: number, minutes: number) => {
      const file = join(dir, `${build}.${n.toString(16).padStart(8, "0")}.bin`);
      writeFileSync(file, "x", { mode: 0o600 });
      utimesSync(file, new Date(), new Date(Date.now() - minutes * 60_000));
    };
    for (let n = 0; n < 70; n++) old("b1", n, 100 - n);
    old("b0", 1, 300);
    old("b2", 1, 200);
    old("b3", 1, 150);
    run("last");
    const kept = files();
    expect(kept.filter((file) => file.startsWith("b1.")).length).toBe(64);
    expect(kept.filter((file) => !file.startsWith("b1.")).sort()).toEqual(["b2.00000001.bin", "b3.00000001.bin"]);
    // The oldest of the build went: the first page, and the seven oldest others.
    expect(keptHelpPage(dir, "b1", "first")).toBeUndefined();
    expect(keptHelpPage(dir, "b1", "last")?.toString("utf8")).toBe(PAGE);
    expect(kept).not.toContain("b1.00000006.bin");
    expect(kept).toContain("b1.00000007.bin");
  });
});

describe("a help page's key", () => {
  const base = (env: NodeJS.ProcessEnv, more: Partial<HelpStart> = {}): HelpStart => ({
    build: "b1",
    id: "get:clusters",
    userAgent: "nvkectl/1.0.0 linux-x64 node-v22.0.0",
    prefix: "NVKECTL_",
    cliDirname: "nvkectl",
    theme: false,
    env: { HOME: "/nonexistent-home", ...env },
    argv: ["node", "run.js", "get", "clusters", "--help"],
    ...more,
  });
  const key = (env: NodeJS.ProcessEnv, more: Partial<HelpStart> = {}) => helpCacheKey(base(env, more));

  it("holds the build, the subject, the user agent, oclif's width and what decides colour", () => {
    const columns = key({ OCLIF_COLUMNS: "100" });
    expect(columns).toBeDefined();
    expect(key({ OCLIF_COLUMNS: "100" })).toBe(columns);
    for (const other of [
      key({ OCLIF_COLUMNS: "120" }),
      key({ OCLIF_COLUMNS: "100" }, { build: "b2" }),
      key({ OCLIF_COLUMNS: "100" }, { id: "get" }),
      key({ OCLIF_COLUMNS: "100" }, { userAgent: "nvkectl/1.0.0 linux-x64 node-v24.0.0" }),
      key({ OCLIF_COLUMNS: "100", FORCE_COLOR: "1" }),
      key({ OCLIF_COLUMNS: "100", FORCE_COLOR: "" }),
      key({ OCLIF_COLUMNS: "100", NO_COLOR: "1" }),
      key({ OCLIF_COLUMNS: "100", TERM: "dumb" }),
      key({ OCLIF_COLUMNS: "100", COLORTERM: "truecolor" }),
    ]) {
      expect(other).toBeDefined();
      expect(other).not.toBe(columns);
    }
    // oclif's width: OCLIF_COLUMNS as parseInt reads it, else 80 when stdout is not a terminal.
    expect(key({ OCLIF_COLUMNS: "100cols" })).toBe(columns);
    if (!isatty(1)) expect(key({ OCLIF_COLUMNS: "80" })).toBe(key({}, { columns: () => 132 }));
  });

  it("is none where colour or the theme depends on more (CI, --color, a theme), and with the caches off", () => {
    for (const env of [
      { CI: "" },
      { CI: "true" },
      { CI_NAME: "codeship" },
      { TF_BUILD: "1" },
      { TEAMCITY_VERSION: "9" },
    ]) {
      expect(key({ OCLIF_COLUMNS: "100", ...env }), JSON.stringify(env)).toBeUndefined();
    }
    for (const flag of ["--color", "--no-color", "--color=256", "-color"]) {
      expect(key({}, { argv: ["node", "run.js", "--help", flag] }), flag).toBeUndefined();
    }
    expect(key({}, { theme: true })).toBeUndefined();
    // Off with the code caches.
    expect(key({ NODE_DISABLE_COMPILE_CACHE: "1" })).toBeUndefined();
    const home = mkdtempSync(join(tmpdir(), "help-cache-theme-"));
    onTestFinished(() => rmSync(home, { recursive: true, force: true }));
    expect(key({ HOME: home })).toBeDefined();
    mkdirSync(join(home, ".config/nvkectl"), { recursive: true });
    writeFileSync(join(home, ".config/nvkectl/theme.json"), "{}");
    expect(key({ HOME: home })).toBeUndefined();
    expect(key({ HOME: home, XDG_CONFIG_HOME: join(home, "xdg") })).toBeDefined();
    expect(
      key({ HOME: home, XDG_CONFIG_HOME: join(home, "xdg"), NVKECTL_CONFIG_DIR: join(home, ".config/nvkectl") }),
    ).toBeUndefined();
    expect(key({ HOME: home, XDG_CONFIG_HOME: "relative" })).toBeUndefined();
  });
});
