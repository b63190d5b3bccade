import { readFileSync } from "node:fs";
import { release } from "node:os";
import { join } from "node:path";

// The help pages are made at build time by oclif's own help (tooling/tsup/help-pages.ts runs
// the built CLI's help, with no user plugin, into a pipe, as a script reading `nvkectl … --help`
// would) and written to dist/help/; the launch index says they are there, and for which width
// and user agent. A page is printed instead of oclif's rendering only when what oclif's help
// reads is what it read at build time: its width (oclif's: OCLIF_COLUMNS, else the terminal's
// when stdout is one, else 80), no colour (supports-color's: stdout not a terminal, no
// FORCE_COLOR, no --color flag), and for the root and topic pages no user or linked plugin
// (their commands and topics would be listed). Anything else is oclif's, as before.
// apps/nvkectl/test/help-pages.test.ts compares every page with oclif's rendering.

/** What the launch index says of the help pages written at build time. */
export interface HelpPages {
  /** The width oclif rendered them at (stdout not a terminal). */
  width: number;
  /** The user agent the root page's VERSION section shows (`<name>/<version> <platform>-<arch> node-<version>`), as rendered. */
  userAgent: string;
  /** The build's id: a hash of its package.json, manifest and bundle (the key of the pages kept at run time, launch/help-cache.ts). */
  build?: string;
}

/** A page's file under dist/help/: the command's or topic's id with "." between its words, `index` for the root. */
export function helpPageFile(id: string): string {
  return `dist/help/${id === "" ? "index" : id.split(":").join(".")}.txt`;
}

/**
 * The help page of `id` ("" for the root help, a topic's or a command's id) when this start's
 * help would render exactly as it did at build time; undefined when oclif must render it.
 */
export function helpPage(
  root: string,
  pages: HelpPages | undefined,
  id: string,
  options: { env: NodeJS.ProcessEnv; argv: readonly string[]; userAgent: string; stdoutIsTTY: boolean | undefined },
): string | undefined {
  if (pages === undefined || pages.width !== 80 || options.stdoutIsTTY === true) return undefined;
  const { env } = options;
  if ((env.OCLIF_COLUMNS ?? "") !== "" || env.FORCE_COLOR !== undefined) return undefined;
  // supports-color reads --color, --no-color, --color=256… anywhere on the command line.
  if (options.argv.some((arg) => arg.includes("color"))) return undefined;
  // The root page's VERSION line: another Node.js or platform is another user agent (one line when it fits).
  // oclif names Windows' Linux "wsl" there (wsl-utils): that root page is oclif's to render.
  if (id === "" && mayBeWsl()) return undefined;
  const otherAgent = id === "" && options.userAgent !== pages.userAgent;
  if (otherAgent && options.userAgent.length > pages.width - 2) return undefined;
  let page: string;
  try {
    page = readFileSync(join(root, helpPageFile(id)), "utf8");
  } catch {
    return undefined;
  }
  if (!otherAgent) return page;
  const line = (agent: string) => `\n  ${agent}\n`;
  return page.includes(line(pages.userAgent))
    ? page.replace(line(pages.userAgent), line(options.userAgent))
    : undefined;
}

/** Whether this may be Linux under Windows (WSL), where oclif's user agent says "wsl" and not "linux". */
function mayBeWsl(): boolean {
  if (process.platform !== "linux") return false;
  if (release().toLowerCase().includes("microsoft")) return true;
  try {
    return readFileSync("/proc/version", "utf8").toLowerCase().includes("microsoft");
  } catch {
    return false;
  }
}
