// The help pages (packages/cli-kit/src/launch/help-page.ts): each help a start can show without
// oclif's full start being needed for it (a command of the CLI's own, by its id or an alias; a
// topic; the root), rendered at build time by the built CLI itself, that is by oclif's own
// Help class (the CLI's NodekitHelp) on the same configuration a start gives it, into a pipe
// (80 columns, no colour) with no user plugin installed. The launcher prints a page only when
// that is what the start would render (launch/help-page.ts); apps/*/test/help-pages.test.ts
// compares every page with oclif's rendering. Run by launch-index.ts after `oclif manifest`.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type HelpPages, helpPageFile } from "../../packages/cli-kit/src/launch/help-page.ts";
import { planCommand } from "../../packages/cli-kit/src/launch/plan.ts";
import { readShippedCli } from "../../packages/cli-kit/src/launch/shipped.ts";

/** The width oclif renders at when stdout is not a terminal (and OCLIF_COLUMNS is unset). */
const WIDTH = 80;

/**
 * The help pages a start of the CLI in `dir` may print, by id ("" for the root): the subject
 * the launcher's plan names for `<words> --help`, for each command, alias and topic of the CLI's own.
 */
function helpSubjects(dir: string): Map<string, string[]> {
  const cli = readShippedCli(dir);
  if (cli === undefined) throw new Error(`help-pages: no manifest in ${dir}`);
  const subjects = new Map<string, string[]>();
  for (const id of ["", ...cli.topics, ...cli.commands.keys()]) {
    const argv = [...(id === "" ? [] : id.split(":")), "--help"];
    const plan = planCommand(cli, argv);
    const subject = plan.kind === "help" ? plan.argv.join(":") : plan.kind === "full" ? plan.help : undefined;
    if (subject !== undefined && !subjects.has(subject)) subjects.set(subject, argv);
  }
  return subjects;
}

/**
 * Renders every page of the built CLI in `dir` into dist/help/ (in a process of its own: its
 * stdout and stderr are pipes, its home a fresh directory) and returns what the launch index
 * says of them.
 */
export function writeHelpPages(dir: string): HelpPages {
  const home = mkdtempSync(join(tmpdir(), "nodekit-help-pages-"));
  try {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: home,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data"),
      XDG_CACHE_HOME: join(home, "cache"),
      NODE_DISABLE_COMPILE_CACHE: "1",
    };
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--render", dir], {
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 << 20,
    });
    if (child.status !== 0) throw new Error(`help-pages: rendering failed (${child.status}):\n${child.stderr}`);
    if (child.stderr !== "") throw new Error(`help-pages: the help wrote to stderr:\n${child.stderr}`);
    const { userAgent, pages } = JSON.parse(child.stdout) as { userAgent: string; pages: Record<string, string> };
    rmSync(join(dir, "dist/help"), { recursive: true, force: true });
    mkdirSync(join(dir, "dist/help"), { recursive: true });
    for (const [id, page] of Object.entries(pages)) {
      if (id !== "" && helpPageFile(id) === helpPageFile("")) throw new Error(`help-pages: a command named ${id}`);
      writeFileSync(join(dir, helpPageFile(id)), page);
    }
    return { width: WIDTH, userAgent, build: buildId(dir) };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * The build's id: a hash of the CLI's package.json, its manifest and every file of its bundle
 * (what oclif's help renders from), 16 hex digits.
 */
function buildId(dir: string): string {
  const hash = createHash("sha256");
  const files = readdirSync(join(dir, "dist"), { recursive: true, encoding: "utf8" })
    .filter((file) => file !== "launch-index.json" && file !== "help" && !file.startsWith(`help${sep}`))
    .sort();
  for (const file of ["package.json", "oclif.manifest.json", ...files.map((file) => join("dist", file))]) {
    const path = join(dir, file);
    if (!statSync(path).isFile()) continue;
    hash.update(`${file}\0`).update(readFileSync(path));
  }
  return hash.digest("hex").slice(0, 16);
}

/** The child: each subject's help through the built CLI's own entry, its stdout collected. */
async function render(dir: string): Promise<void> {
  const require = createRequire(import.meta.url);
  const entry = require(join(dir, "dist/run.js")) as { run(binUrl: string, argv: string[]): Promise<void> };
  const binUrl = pathToFileURL(join(dir, "bin/run.js")).href;
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.setMaxListeners(0);
  const pages: Record<string, string> = {};
  for (const [id, argv] of helpSubjects(dir)) {
    let text = "";
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      const done = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
      if (done) queueMicrotask(done);
      return true;
    }) as typeof process.stdout.write;
    try {
      await entry.run(binUrl, argv);
    } finally {
      process.stdout.write = write;
    }
    if (process.exitCode !== undefined && process.exitCode !== 0)
      throw new Error(`${argv.join(" ")}: exit ${process.exitCode}`);
    pages[id] = text;
  }
  const { name, version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const arch = process.arch === "ia32" ? "x86" : process.arch;
  const userAgent = `${name}/${version} ${process.platform}-${arch} node-${process.version}`;
  write(JSON.stringify({ userAgent, pages }));
}

if (process.argv[2] === "--render" && process.argv[3] !== undefined) await render(process.argv[3]);
