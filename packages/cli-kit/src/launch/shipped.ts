import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { CommandTable, GlobalFlag } from "./argv.ts";
import type { HelpPages } from "./help-page.ts";

/** A flag as oclif's manifest describes it (the part the launcher reads). */
interface ManifestFlag {
  name: string;
  char?: string;
  type: "boolean" | "option";
  allowNo?: boolean;
  helpGroup?: string;
  [key: string]: unknown;
}

/** A command as oclif's manifest describes it (the part the launcher reads). */
export interface ManifestCommand {
  id: string;
  aliases?: string[];
  hiddenAliases?: string[];
  hidden?: boolean;
  pluginName?: string;
  pluginType?: string;
  relativePath?: string[];
  flags: Record<string, ManifestFlag>;
  args?: Record<string, unknown>;
  strict?: boolean;
  [key: string]: unknown;
}

interface PackageJson {
  name: string;
  version: string;
  description?: string;
  oclif: {
    bin?: string;
    dirname?: string;
    topicSeparator?: string;
    additionalHelpFlags?: string[];
    additionalVersionFlags?: string[];
    hooks?: Record<string, unknown>;
    topics?: Record<string, { description?: string; hidden?: boolean }>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** The CLI as it was built: its package.json and the oclif manifest shipped beside it. */
export interface ShippedCli {
  root: string;
  pjson: PackageJson;
  bin: string;
  /** The directory name under the XDG data/config/cache dirs (oclif's `dirname`). */
  dirname: string;
  /** Commands by id and by alias. */
  commands: ReadonlyMap<string, ManifestCommand>;
  topics: ReadonlySet<string>;
  table: CommandTable;
  /** The bundle's hot file (`dist/hot-<hash>.js`, from the launch index): what a command's start loads. */
  hot?: string;
  /** The help pages rendered at build time (dist/help/, launch/help-page.ts), from the launch index. */
  help?: HelpPages;
}

/** Hooks that run around every command; a CLI that declares one takes oclif's full start. */
export const COMMAND_HOOKS = ["init", "prerun", "preparse", "postrun", "finally", "command_not_found"] as const;

/** The part of the shipped CLI that its package.json alone says (enough for `--version`). */
export type ShippedPackage = Pick<ShippedCli, "root" | "pjson" | "bin" | "dirname">;

/** The shipped package.json, or undefined when it is missing or not an oclif CLI's with " " between words. */
export function readShippedPackage(root: string): ShippedPackage | undefined {
  let pjson: PackageJson;
  try {
    pjson = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  } catch {
    return undefined;
  }
  if (typeof pjson.oclif !== "object" || pjson.oclif.topicSeparator !== " ") return undefined;
  return { root, pjson, bin: pjson.oclif.bin ?? pjson.name, dirname: pjson.oclif.dirname ?? pjson.name };
}

/** The launch index: the manifest without what only help shows, written by the build beside the bundle. */
export const LAUNCH_INDEX = "dist/launch-index.json";

/** A command's entry in the launch index: what the launcher plans with and a command's start reads. */
const INDEXED = ["id", "aliases", "hiddenAliases", "hidden", "pluginName", "pluginType", "relativePath", "strict"];
const INDEXED_FLAG = ["name", "char", "type", "allowNo", "helpGroup"];

/**
 * The launch index of a manifest (pure; tooling/tsup/launch-index.ts writes it at build time):
 * each command's id, aliases, plugin, path and flags' names, characters and types, without
 * the summaries, descriptions, examples and flag help a start never reads. A quarter of the
 * manifest's size, and a fifth of its parse.
 */
export function launchIndexOf(
  manifest: { version: string; commands: Record<string, ManifestCommand> },
  hot?: string,
  help?: HelpPages,
): {
  version: string;
  commands: Record<string, ManifestCommand>;
  hot?: string;
  help?: HelpPages;
} {
  const pick = <T extends object>(value: T, keys: readonly string[]) =>
    Object.fromEntries(Object.entries(value).filter(([key, v]) => keys.includes(key) && v !== undefined));
  const commands: Record<string, ManifestCommand> = {};
  for (const [id, command] of Object.entries(manifest.commands)) {
    const flags = Object.fromEntries(
      Object.entries(command.flags).map(([name, flag]) => [name, pick(flag, INDEXED_FLAG)]),
    );
    commands[id] = { ...pick(command, INDEXED), flags } as ManifestCommand;
  }
  return {
    version: manifest.version,
    commands,
    ...(hot === undefined ? {} : { hot }),
    ...(help === undefined ? {} : { help }),
  };
}

/**
 * The shipped package.json and manifest, or undefined when either is missing or they disagree.
 * `pkg` is the package.json when it was read already. `from: "index"` reads the launch index
 * instead (the manifest when there is no index of this version): enough to plan a start and
 * run a command, not to show help.
 */
export function readShippedCli(
  root: string,
  pkg = readShippedPackage(root),
  from: "manifest" | "index" = "manifest",
): ShippedCli | undefined {
  if (pkg === undefined) return undefined;
  const { pjson } = pkg;
  let manifest:
    | { version: string; commands: Record<string, ManifestCommand>; hot?: unknown; help?: HelpPages }
    | undefined;
  if (from === "index") {
    try {
      manifest = JSON.parse(readFileSync(join(root, LAUNCH_INDEX), "utf8"));
    } catch {
      manifest = undefined;
    }
    if (manifest?.version !== pjson.version) return readShippedCli(root, pkg, "manifest");
  }
  try {
    manifest ??= JSON.parse(readFileSync(join(root, "oclif.manifest.json"), "utf8"));
  } catch {
    return undefined;
  }
  if (manifest === undefined || manifest.version !== pjson.version) return undefined;
  const commands = new Map<string, ManifestCommand>();
  const topics = new Set<string>(Object.keys(pjson.oclif.topics ?? {}));
  for (const command of Object.values(manifest.commands)) {
    for (const id of [command.id, ...(command.aliases ?? []), ...(command.hiddenAliases ?? [])]) {
      commands.set(id, command);
      const parts = id.split(":");
      for (let n = 1; n < parts.length; n++) topics.add(parts.slice(0, n).join(":"));
    }
  }
  return {
    ...pkg,
    ...(typeof manifest.hot === "string" ? { hot: manifest.hot } : {}),
    ...(typeof manifest.help?.userAgent === "string" ? { help: manifest.help } : {}),
    commands,
    topics,
    table: {
      isCommand: (id) => commands.has(id),
      isTopic: (id) => topics.has(id),
      globalFlags: globalFlagsOf(commands.values()),
    },
  };
}

/** The flags in the GLOBAL help group: the flags every command of the CLI takes. */
export function globalFlagsOf(
  commands: Iterable<{ flags: Record<string, { name: string; char?: string; type: string; helpGroup?: string }> }>,
): GlobalFlag[] {
  const flags = new Map<string, GlobalFlag>();
  for (const command of commands) {
    for (const flag of Object.values(command.flags)) {
      if (flag.helpGroup !== "GLOBAL" || flags.has(flag.name)) continue;
      flags.set(flag.name, { name: flag.name, char: flag.char, takesValue: flag.type === "option" });
    }
  }
  return [...flags.values()];
}

/** oclif's environment-variable prefix for a CLI: `nvkectl` → `NVKECTL_`. */
/** oclif's user agent for a CLI's package.json on this machine: `name/version platform-arch node-vX` (what `--version` prints). */
export function userAgentOf(pjson: { name: string; version: string }): string {
  const arch = process.arch === "ia32" ? "x86" : process.arch;
  return `${pjson.name}/${pjson.version} ${process.platform}-${arch} node-${process.version}`;
}

export const envPrefix = (bin: string) => `${bin.replace(/-/g, "_").toUpperCase()}_`;

/** Where oclif keeps user-installed and linked plugins: `<dataDir>/package.json`. */
function dataDir(cli: Pick<ShippedCli, "bin" | "dirname">, env: NodeJS.ProcessEnv): string {
  const scoped = env[`${envPrefix(cli.bin)}DATA_DIR`];
  if (scoped) return scoped;
  const xdg = env.XDG_DATA_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".local", "share");
  return join(base, cli.dirname);
}

/** A user or linked plugin that declares no hook around commands: the CLI's own commands may start fast beside it. */
export interface QuietPlugin {
  name: string;
  /** Where its command files are (oclif's `commands` directory), when it names one. */
  commands?: string;
}

/**
 * The user and linked plugins (`<dataDir>/package.json`'s `oclif.plugins`, as oclif's plugin
 * loader reads it), when none of them needs oclif's full start before the CLI's own commands;
 * or why one does: a hook around commands (its `init` and `prerun` must run), plugins of its
 * own, commands not in a directory, or a package.json that cannot be read.
 */
export function userPlugins(
  cli: Pick<ShippedCli, "bin" | "dirname">,
  env: NodeJS.ProcessEnv,
): { plugins: QuietPlugin[] } | { full: string } {
  const dir = dataDir(cli, env);
  let text: string;
  try {
    text = readFileSync(join(dir, "package.json"), "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? { plugins: [] } : { full: "user plugins unreadable" };
  }
  let listed: unknown[];
  try {
    const data = JSON.parse(text) as { oclif?: { plugins?: unknown } };
    listed = Array.isArray(data.oclif?.plugins) ? data.oclif.plugins : [];
  } catch {
    return { full: "user plugins unreadable" };
  }
  const plugins: QuietPlugin[] = [];
  for (const entry of listed) {
    const { type, name, root } = (entry ?? {}) as { type?: unknown; name?: unknown; root?: unknown };
    if (type !== "user" && type !== "link") continue;
    if (typeof name !== "string") return { full: "a user plugin without a name" };
    const at = type === "link" ? root : join(dir, "node_modules", name);
    if (typeof at !== "string") return { full: `plugin ${name}: no root` };
    let pjson: PackageJson;
    try {
      pjson = JSON.parse(readFileSync(join(at, "package.json"), "utf8")) as PackageJson;
    } catch {
      return { full: `plugin ${name}: no package.json` };
    }
    const oclif: Partial<PackageJson["oclif"]> = pjson.oclif ?? {};
    const hooks = Object.keys(oclif.hooks ?? {}).filter(
      (hook) => hook !== "command_not_found" && (COMMAND_HOOKS as readonly string[]).includes(hook),
    );
    if (hooks.length > 0) return { full: `plugin ${name} hooks: ${hooks.join(", ")}` };
    if (Array.isArray(oclif.plugins) && oclif.plugins.length > 0) return { full: `plugin ${name} has plugins` };
    const commands = oclif.commands;
    if (typeof commands === "string") plugins.push({ name, commands: join(at, commands) });
    else if (commands === undefined) plugins.push({ name });
    else return { full: `plugin ${name}: commands not in one directory` };
  }
  return { plugins };
}

/**
 * Whether a plugin has commands under `id` (`get clusters extra` under `get:clusters`): then oclif,
 * knowing every plugin's commands, may read the command line as one of those.
 */
export function extendsCommand(plugins: readonly QuietPlugin[], id: string): boolean {
  return plugins.some((plugin) => {
    if (plugin.commands === undefined) return false;
    try {
      return statSync(join(plugin.commands, ...id.split(":"))).isDirectory();
    } catch {
      return false;
    }
  });
}

/** Whether the flags before any `--` are all flags `command` declares (with their values skipped). */
export function knowsEveryFlag(command: ManifestCommand, argv: readonly string[]): boolean {
  const flags = Object.values(command.flags);
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === "--") return true;
    if (!token.startsWith("-") || token === "-") continue;
    let flag: ManifestFlag | undefined;
    let inline = false;
    if (token.startsWith("--")) {
      const [name = "", ...value] = token.slice(2).split("=");
      inline = value.length > 0;
      flag = flags.find((f) => f.name === name || (f.allowNo === true && `no-${f.name}` === name));
    } else {
      flag = flags.find((f) => f.char !== undefined && f.char === token[1]);
      inline = token.length > 2;
      if (flag?.type === "boolean" && inline) return false;
    }
    if (flag === undefined) return false;
    if (flag.type === "option" && !inline) i++;
  }
  return true;
}
