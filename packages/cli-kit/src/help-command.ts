import { errorCodes, UserError } from "@nodekit/errors";
import type { Config } from "@oclif/core/config";
import { suggestCommands } from "./not-found.ts";

/**
 * `<bin> help [COMMAND…]`: the same help as `<bin> COMMAND --help` (the CLI's help class),
 * the root help without words. Words that name no command or topic are UNKNOWN_COMMAND
 * (exit 127) with the closest commands, before any help is printed.
 */
export async function showHelpFor(config: Config, words: readonly string[]): Promise<void> {
  const typed = words.join(" ");
  const id = words.join(":");
  if (words.length > 0 && config.findCommand(id) === undefined && config.findTopic(id) === undefined) {
    const suggestions = suggestCommands(typed, config.commands);
    throw new UserError(errorCodes.UNKNOWN_COMMAND, `"${typed}" is not a ${config.bin} command`, {
      next: [
        ...(suggestions.length === 0
          ? []
          : [`did you mean: ${suggestions.map((s) => `${config.bin} help ${s}`).join(", or ")}`]),
        `run ${config.bin} help for the list of commands`,
      ],
      facts: { command: typed },
    });
  }
  // The help class (and oclif's help formatting) loads only for help.
  const { NodekitHelp } = await import("./help.ts");
  await new NodekitHelp(await withHelpText(config)).showHelp([...words]);
}

/**
 * A config that holds what help shows. A command started on the fast path has its config
 * from the launch index, which leaves out the summaries, descriptions, topics, arguments and flag
 * help; help reads them from the shipped manifest, as `COMMAND --help` does.
 */
async function withHelpText(config: Config): Promise<Config> {
  const hasText = config.commands.some((command) => command.summary !== undefined || command.description !== undefined);
  if (hasText && config.topics.some((topic) => topic.description !== undefined)) {
    return config;
  }
  const { readShippedCli } = await import("./launch/shipped.ts");
  const shipped = readShippedCli(config.root);
  if (shipped === undefined) return config;
  const { manifestConfig } = await import("./launch/manifest-config.ts");
  return manifestConfig(shipped);
}
