import { Args, showHelpFor } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../base.ts";

export default class Help extends NvkectlCommand<typeof Help> {
  static override summary = "Show the help of a command (nvkectl help get clusters is nvkectl get clusters --help).";
  static override description =
    "Without COMMAND, the list of commands and the global flags, as nvkectl --help prints them. A COMMAND that does not exist exits 127 with the closest ones.";

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "<%= config.bin %> <%= command.id %> get clusters",
    "<%= config.bin %> <%= command.id %> install",
  ];

  // The command's words, as many as it has: `help get clusters`.
  static override strict = false;

  static override args = {
    command: Args.string({ description: "The command (its words, e.g. get clusters), or a topic (get)." }),
  };

  override async run(): Promise<void> {
    await showHelpFor(
      this.config,
      this.argv.filter((word) => !word.startsWith("-")),
    );
  }
}
