import { dirname, isAbsolute, join } from "node:path";
import { codeCacheDir, readPrivateFile, writePrivateFile } from "./code-cache.ts";

// Help on a terminal (issue 25). The pages made at build time (launch/help-page.ts) serve a
// help written into a pipe at 80 columns; on a terminal, or with OCLIF_COLUMNS, oclif renders
// it (its full start for the root and a topic, the fast path for a command): 50–70 ms where a
// page costs 25. So a page oclif rendered for a start is kept, as the code cache is
// (launch/code-cache.ts: a private directory of the user's own, no link followed, written
// atomically 0600, a CRC-32 checked before use), in `<cache dir>/help/`, and printed the next
// time a start would render exactly the same: the key is everything oclif's help reads.
//
// - the build (`help.build` in the launch index: a hash of the manifest and the bundle) and
//   the page's subject ("" for the root, a topic's or a command's id);
// - oclif's width: OCLIF_COLUMNS, else the terminal's columns when stdout is one, else 80;
// - colour, as supports-color (stdout and stderr, which oclif's help both asks) and ansis
//   decide it: stdout and stderr being terminals, FORCE_COLOR, NO_COLOR, TERM, COLORTERM,
//   TERM_PROGRAM(_VERSION). What else they read (CI and its vendors' variables, TF_BUILD,
//   TEAMCITY_*, PM2_HOME, NEXT_RUNTIME, a `color` flag on the command line, Windows) keeps
//   no page: oclif renders, as it does with a theme (`oclif.theme`, or `theme.json` in the
//   CLI's config directory);
// - the user agent (the root page's VERSION section);
// - no user or linked plugin for the root and topic pages (the launcher names a subject for
//   those only then, launch/plan.ts).
//
// A page is kept only after a help that returned with exit code 0 and wrote nothing to
// stderr, with the bytes it wrote to stdout; each file holds its key, compared whole before
// the page is used. Anything wrong with a kept page (a link, another owner, a bad CRC, another
// key) means oclif renders, and nothing is said. At most PAGES pages a build, and the pages
// of two other builds besides. NODE_DISABLE_COMPILE_CACHE=1 turns it off with the code caches.

/** How many pages of one build are kept (widths × subjects); the oldest go first. */
const PAGES = 64;

/** Where a CLI keeps the help pages oclif rendered: beside its code caches, `<cache dir>/help`. */
export function helpCacheDir(cliDirname: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const code = codeCacheDir(cliDirname, env);
  return code === undefined ? undefined : join(dirname(code), "help");
}

/** What a start's help depends on, and the CLI's. */
export interface HelpStart {
  /** The build's id (launch index's `help.build`). */
  build: string;
  /** "" for the root help, else a topic's or a command's id. */
  id: string;
  userAgent: string;
  /** The CLI's environment-variable prefix (`NVKECTL_`), its directory name and whether its package.json names a theme. */
  prefix: string;
  cliDirname: string;
  theme: boolean;
  env: NodeJS.ProcessEnv;
  /** The whole command line (process.argv): supports-color and ansis read `--color` anywhere on it. */
  argv: readonly string[];
  /** The terminal's columns when stdout is one (process.stdout.getWindowSize). */
  columns?: () => number;
}

/** The variables supports-color and ansis read whose values are part of a page's key. */
const COLOUR = ["FORCE_COLOR", "NO_COLOR", "TERM", "COLORTERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION"];
/** Variables whose presence makes the colour depend on more (CI vendors' variables): no page is kept. */
const UNSURE = /^(?:CI|CI_.*|TF_BUILD|TEAMCI.*|PM2_HOME|NEXT_RUNTIME)$/;

/**
 * The key of the page this start's help would render, everything oclif's help reads; undefined
 * when the start is one whose rendering is oclif's to make every time.
 */
export function helpCacheKey(start: HelpStart): string | undefined {
  const { env } = start;
  // Off as the code caches are (the docs' generator runs the CLIs with HOME at the checkout).
  if (env.NODE_DISABLE_COMPILE_CACHE === "1") return undefined;
  if (process.platform === "win32" || start.theme) return undefined;
  if (start.argv.some((arg) => arg.includes("color"))) return undefined;
  if (Object.keys(env).some((name) => UNSURE.test(name))) return undefined;
  const { isatty } = process.getBuiltinModule("node:tty");
  const out = isatty(1);
  // oclif's stdtermwidth (@oclif/core's screen.js).
  let width = Number.parseInt(env.OCLIF_COLUMNS ?? "", 10);
  if (!width) {
    const columns = out ? (start.columns?.() ?? 0) : 80;
    width = columns < 1 ? 80 : Math.max(columns, 40);
  }
  if (hasUserTheme(start)) return undefined;
  const colour = COLOUR.map((name) => (name in env ? `${name}=${env[name]}` : ""));
  return JSON.stringify([start.build, start.id, start.userAgent, width, out, isatty(2), ...colour]);
}

/** Whether oclif's Config would find a theme.json in the CLI's config directory (or may: in doubt, yes). */
function hasUserTheme(start: HelpStart): boolean {
  const { env } = start;
  const xdg = env.XDG_CONFIG_HOME;
  const home = env.HOME;
  const dir =
    env[`${start.prefix}CONFIG_DIR`] ||
    (xdg ? join(xdg, start.cliDirname) : home ? join(home, ".config", start.cliDirname) : undefined);
  if (dir === undefined || !isAbsolute(dir)) return true;
  try {
    process.getBuiltinModule("node:fs").lstatSync(join(dir, "theme.json"));
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** The file a page of `key` is kept in: `<build>.<CRC-32 of the key>.bin` (the key itself is inside). */
function pageFile(build: string, key: string): string {
  const crc = process.getBuiltinModule("node:zlib").crc32(key);
  return `${build.replace(/[^A-Za-z0-9_-]/g, "_")}.${crc.toString(16).padStart(8, "0")}.bin`;
}

/** The page kept for `key` in `dir`, when there is one and it is sound; undefined otherwise. */
export function keptHelpPage(dir: string, build: string, key: string): Buffer | undefined {
  const payload = readPrivateFile(dir, pageFile(build, key));
  if (payload === undefined) return undefined;
  const head = Buffer.from(`${key}\n`);
  return payload.subarray(0, head.length).equals(head) ? payload.subarray(head.length) : undefined;
}

/**
 * Records what the help about to run writes to stdout; the returned function, called when the
 * help has returned, keeps it for `key` when the run has exit code 0 and wrote nothing to
 * stderr, and puts the streams back either way.
 */
export function recordHelpPage(dir: string, build: string, key: string): () => void {
  const { stdout, stderr } = process;
  const write = stdout.write;
  const writeErr = stderr.write;
  const chunks: Buffer[] = [];
  let clean = true;
  stdout.write = function (this: typeof stdout, chunk: unknown, ...rest: unknown[]) {
    if (typeof chunk === "string")
      chunks.push(Buffer.from(chunk, typeof rest[0] === "string" ? (rest[0] as BufferEncoding) : "utf8"));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    else clean = false;
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof stdout.write;
  stderr.write = function (this: typeof stderr, ...args: unknown[]) {
    clean = false;
    return (writeErr as (...args: unknown[]) => boolean).apply(this, args);
  } as typeof stderr.write;
  return () => {
    stdout.write = write;
    stderr.write = writeErr;
    const code = process.exitCode ?? 0;
    if (!clean || (code !== 0 && code !== "0") || chunks.length === 0) return;
    writePrivateFile(dir, pageFile(build, key), Buffer.concat([Buffer.from(`${key}\n`), ...chunks]), PAGES);
  };
}
