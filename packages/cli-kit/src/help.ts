import type { Command, Interfaces } from "@oclif/core";
import { Help } from "@oclif/core/help";

/**
 * oclif's help with two changes: the root help lists the global flags (they work with
 * every command, before or after it), and a topic lists each command once, its aliases
 * beside it, instead of a second row per alias.
 */
export class NodekitHelp extends Help {
  protected override formatCommands(commands: Command.Loadable[]): string {
    const aliasIds = new Set(commands.flatMap((command) => command.aliases ?? []));
    const canonical = commands
      .filter((command) => !aliasIds.has(command.id))
      .map((command) => {
        const aliases = (command.aliases ?? []).map((alias) => alias.split(":").join(" "));
        if (aliases.length === 0) return command;
        const summary = command.summary ?? command.description?.split("\n")[0] ?? "";
        return { ...command, summary: `${summary} (alias: ${aliases.join(", ")})` };
      });
    return super.formatCommands(canonical as Command.Loadable[]);
  }

  override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    const flags = globalFlags(this.config);
    if (flags.length === 0) return;
    const rows = flags.map((flag) => {
      const names = `${flag.char === undefined ? "    " : `-${flag.char}, `}--${flag.name}${flag.type === "option" ? "=<value>" : ""}`;
      return [names, flag.description ?? ""];
    });
    const body = this.renderList(rows, { indentation: 2, multiline: false, spacer: "\n" });
    this.log(this.section("GLOBAL FLAGS", `${body}\n\nThey work with every command, before or after its name.`));
    this.log("");
  }
}

interface FlagLike {
  name: string;
  char?: string;
  type: string;
  description?: string;
  helpGroup?: string;
}

/** The root plugin's GLOBAL flags, from its first command that has them. */
function globalFlags(config: Interfaces.Config): FlagLike[] {
  const own = config.commands.filter((command) => command.pluginName === config.pjson.name);
  const flags = new Map<string, FlagLike>();
  for (const command of own) {
    for (const flag of Object.values(command.flags ?? {}) as FlagLike[]) {
      if (flag.helpGroup === "GLOBAL" && !flags.has(flag.name)) flags.set(flag.name, flag);
    }
  }
  return [...flags.values()];
}
