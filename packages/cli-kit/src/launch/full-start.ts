import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Config } from "@oclif/core/config";
import { flush } from "@oclif/core/flush";
import { handle } from "@oclif/core/handle";
import { run } from "@oclif/core/run";
import { NodekitHelp } from "../help.ts";
import { arrangeArgv, asksForHelp } from "./argv.ts";
import { globalFlagsOf } from "./shipped.ts";
import { topicWithoutCommand } from "./usage.ts";

/**
 * oclif's own start, for anything the fast path leaves to it: every plugin is loaded (user
 * plugins' init and prerun hooks run), then the same arrangement of global flags as the
 * fast path, with every plugin's commands known; help through the CLI's own help class.
 */
export async function fullStart(binUrl: string, argv: readonly string[]): Promise<void> {
  // oclif warns on every start that a linked ES module plugin "cannot be auto-transpiled" and
  // that its compiled source is used: that is how a linked plugin runs here (docs/plugins.md says
  // to build it before linking), not news worth a warning on every command.
  process.env.OCLIF_DISABLE_LINKED_ESM_WARNING ??= "1";
  // The package's root, not the bin: bin/ has a package.json of its own (it says CommonJS).
  const config = await Config.load(dirname(dirname(fileURLToPath(binUrl))));
  const own = config.commands.filter((command) => command.pluginName === config.pjson.name);
  const arranged = arrangeArgv(argv, {
    isCommand: (id) => config.findCommand(id) !== undefined,
    isTopic: (id) => config.findTopic(id) !== undefined,
    globalFlags: globalFlagsOf(own),
  });
  const versionFlags = ["--version", ...(config.pjson.oclif.additionalVersionFlags ?? [])];
  const helpFlags = ["--help", ...(config.pjson.oclif.additionalHelpFlags ?? [])];
  if (!versionFlags.includes(arranged.argv[0] ?? "")) {
    const bare = arranged.words === 0 && arranged.argv.length === arranged.moved.length;
    if (bare || asksForHelp(arranged.argv, helpFlags)) {
      await config.runHook("init", { argv: arranged.argv.slice(arranged.words), id: arranged.id ?? arranged.topic });
      await new NodekitHelp(config).showHelp(arranged.argv.slice(0, arranged.words));
      return;
    }
    if (arranged.id === undefined && arranged.topic !== undefined) {
      const commands = config.commands
        .filter((command) => !command.hidden && command.id.startsWith(`${arranged.topic}:`))
        .map((command) => ({ id: command.id, aliases: command.aliases ?? [] }));
      await topicWithoutCommand({ bin: config.bin, version: config.version, topic: arranged.topic, commands, argv });
      return;
    }
  }
  // oclif's `execute`, but an exit a plugin's command asked for ends the process without a word
  // more: the plugin brings its own copy of oclif, whose ExitError is not this copy's, and
  // oclif's handler (an `instanceof` check) printed it as a failure (`› Error: EEXIT: 6`).
  try {
    await run(arranged.argv, config);
    await flush();
  } catch (error) {
    await handle(asExit(error));
  }
}

/** An ExitError of any copy of oclif marked as one oclif's handler ends the process with quietly. */
function asExit(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  const exit = error as Error & { code?: unknown; oclif?: { exit?: unknown }; skipOclifErrorHandling?: boolean };
  if (exit.code === "EEXIT" && typeof exit.oclif?.exit === "number") exit.skipOclifErrorHandling = true;
  return error;
}
