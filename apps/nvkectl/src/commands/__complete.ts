import { Args } from "@nodekit/cli-kit";
import type { Command } from "@oclif/core";
import { NvkectlCommand } from "../base.ts";
import { type CompletableCommand, type CompletionLookups, completionCandidates } from "../services/completion.ts";

export default class Complete extends NvkectlCommand<typeof Complete> {
  static override hidden = true;
  static override summary = "The completions of the last word (what the scripts of nvkectl completion call).";
  static override description =
    "Prints the candidates for the last WORD, one per line, from the words typed before it: a command's next word, its flags, a flag's values, and the names of the site's clusters, node pools and sites. Prints nothing when it has nothing to offer or the site does not answer.";

  static override examples = ["<%= config.bin %> <%= command.id %> -- get clusters ''"];

  // The words as typed, flags included, after `--`.
  static override strict = false;

  static override args = {
    word: Args.string({ description: "The words typed so far; the last is the one to complete." }),
  };

  override async run(): Promise<void> {
    const words = this.argv[0] === "--" ? this.argv.slice(1) : this.argv;
    const candidates = await completionCandidates(words, await this.commands(), this.lookups(words));
    if (candidates.length > 0) await this.out(candidates.join("\n"));
  }

  /**
   * Every command with its flags as oclif's manifest has them: the start-up index the launcher
   * loads keeps only what parsing needs (no flag values, no arguments), so this reads the
   * manifest itself; a plugin's commands come from oclif's config.
   */
  private async commands(): Promise<CompletableCommand[]> {
    const { readFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const manifest = JSON.parse(await readFile(join(this.config.root, "oclif.manifest.json"), "utf8")) as {
      commands: Record<string, Command.Cached>;
    };
    const own = Object.values(manifest.commands);
    const others = this.config.commands.filter((command) => manifest.commands[command.id] === undefined);
    return [...own, ...others].map((command) => ({
      id: command.id,
      aliases: command.aliases,
      hidden: command.hidden,
      takesArgs: Object.keys(command.args ?? {}).length > 0,
      flags: Object.fromEntries(
        Object.entries(command.flags ?? {}).map(([name, flag]) => [
          name,
          {
            type: flag.type,
            char: flag.char,
            hidden: flag.hidden,
            options: flag.type === "option" ? flag.options : undefined,
            helpValue: flag.type === "option" && typeof flag.helpValue === "string" ? flag.helpValue : undefined,
          },
        ]),
      ),
    }));
  }
  /** The site's names; a site that does not answer (or none configured) offers none, quietly. */
  private lookups(words: readonly string[]): CompletionLookups {
    const at = words.findIndex((word) => word === "--site" || word.startsWith("--site="));
    const site = at === -1 ? undefined : words[at]?.includes("=") ? words[at]?.split("=")[1] : words[at + 1];
    if (site !== undefined) (this.flags as { site?: string }).site = site;
    const quietly = async (names: () => Promise<string[]>) => names().catch(() => []);
    return {
      sites: () =>
        quietly(async () => {
          const { readSites } = await import("../services/sites.ts");
          return (await readSites()).sites.map((s) => s.name);
        }),
      clusters: () =>
        quietly(async () => {
          const { listClusters } = await import("../services/clusters.ts");
          const client = await this.controller();
          const names: string[] = [];
          await listClusters({ client, onPage: (page) => void names.push(...page.map((c) => c.name)) });
          return names;
        }),
      nodePools: (cluster) =>
        quietly(async () => {
          const { listNodePools } = await import("../services/nodepools.ts");
          const client = await this.controller();
          const names: string[] = [];
          await listNodePools({ client, cluster, onPage: (page) => void names.push(...page.map((p) => p.name)) });
          return names;
        }),
    };
  }
}
