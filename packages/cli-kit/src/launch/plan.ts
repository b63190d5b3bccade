import { arrangeArgv, asksForHelp } from "./argv.ts";
import {
  COMMAND_HOOKS,
  envPrefix,
  extendsCommand,
  knowsEveryFlag,
  type ManifestCommand,
  type QuietPlugin,
  type ShippedCli,
  type ShippedPackage,
  userAgentOf,
  userPlugins,
} from "./shipped.ts";

// Decides, from the shipped package.json and manifest alone, whether a command line can start
// without oclif's Config.load (which loads every plugin): `--version`, `--help` of one of the
// CLI's own commands, and any of its own commands whose flags are all known, beside user and
// linked plugins that declare no hook around commands. Anything unusual takes oclif's full
// start: a plugin with an init or prerun hook (it must run before every command), a hook in
// the CLI's own package.json, oclif's debug variables, an unknown command or flag (oclif's
// messages and suggestions), a plugin's command, a topic a plugin may add to, the root help.

/** What the launcher does with a command line. */
export type StartPlan =
  | { kind: "version"; userAgent: string }
  | { kind: "help"; argv: string[] }
  | { kind: "command"; command: ManifestCommand; argv: string[] }
  | { kind: "topic"; topic: string; argv: string[] }
  /** `help`: the full start shows that help (the root's, "", or a topic's), which a page made at build time may hold. */
  | { kind: "full"; reason: string; help?: string };

/**
 * What the package.json (the CLI's and its plugins') alone decides, before the manifest is
 * read: oclif's full start for anything unusual, or `--version`; else the plugins installed
 * (none with a hook), for `planCommand`.
 */
export function planEarly(
  cli: ShippedPackage,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Extract<StartPlan, { kind: "full" | "version" }> | { kind: "manifest"; plugins: QuietPlugin[] } {
  const prefix = envPrefix(cli.bin);
  if (env[`${prefix}FULL_START`] === "1") return { kind: "full", reason: `${prefix}FULL_START=1` };
  if (env.DEBUG || env[`${prefix}DEBUG`] || env.NODE_ENV === "development") return { kind: "full", reason: "debug" };
  // The CLI's own command_not_found hook runs only for a command line the fast path never
  // takes (an unknown command goes to the full start), so it does not turn the fast path off.
  const hooks = Object.keys(cli.pjson.oclif.hooks ?? {}).filter(
    (hook) => hook !== "command_not_found" && (COMMAND_HOOKS as readonly string[]).includes(hook),
  );
  if (hooks.length > 0) return { kind: "full", reason: `hooks: ${hooks.join(", ")}` };
  const installed = userPlugins(cli, env);
  if ("full" in installed) return { kind: "full", reason: installed.full };
  const { oclif } = cli.pjson;
  if ([...(oclif.additionalVersionFlags ?? []), "--version"].includes(argv[0] ?? "")) {
    return { kind: "version", userAgent: userAgentOf(cli.pjson) };
  }
  return { kind: "manifest", plugins: installed.plugins };
}

/**
 * The plan for a command line that is not `--version`, from the manifest; `plugins` are the
 * user and linked plugins installed (none with a hook): only oclif knows their commands.
 */
export function planCommand(cli: ShippedCli, argv: readonly string[], plugins: readonly QuietPlugin[] = []): StartPlan {
  const { oclif } = cli.pjson;
  const arranged = arrangeArgv(argv, cli.table);
  const command = arranged.id === undefined ? undefined : cli.commands.get(arranged.id);
  if (asksForHelp(arranged.argv, ["--help", ...(oclif.additionalHelpFlags ?? [])])) {
    // oclif's help reads `help` as no subject (`help --help` is the root help, with the topics
    // the launch index leaves out): that one is oclif's too.
    if (command === undefined || arranged.id === "help" || extendsCommand(plugins, command.id)) {
      // The root's help or a topic's, with every plugin's commands: made at build time with none installed.
      const subject = command === undefined && arranged.unknown === undefined ? (arranged.topic ?? "") : undefined;
      return {
        kind: "full",
        reason: "help of no command of the CLI's own",
        ...(subject !== undefined && plugins.length === 0 ? { help: subject } : {}),
      };
    }
    return { kind: "help", argv: arranged.argv.slice(0, arranged.words) };
  }
  if (command === undefined) {
    // Only the CLI's own commands are known here, so a topic is one when no plugin is installed.
    if (arranged.topic !== undefined && plugins.length === 0) {
      return { kind: "topic", topic: arranged.topic, argv: arranged.argv };
    }
    // The CLI's name alone (or with global flags only) shows the root help.
    const bare =
      arranged.words === 0 && arranged.unknown === undefined && arranged.argv.length === arranged.moved.length;
    return {
      kind: "full",
      reason: "no command of the CLI's own",
      ...(bare && plugins.length === 0 ? { help: "" } : {}),
    };
  }
  if (command.pluginName !== cli.pjson.name || command.relativePath === undefined) {
    return { kind: "full", reason: "a plugin's command" };
  }
  if (extendsCommand(plugins, command.id)) return { kind: "full", reason: "a plugin has commands under it" };
  const args = arranged.argv.slice(arranged.words);
  if (!knowsEveryFlag(command, args)) return { kind: "full", reason: "a flag the command does not declare" };
  return { kind: "command", command, argv: args };
}
