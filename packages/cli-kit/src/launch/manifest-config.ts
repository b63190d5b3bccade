import { arch as osArch } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Command, Config, Interfaces } from "@oclif/core";
import { envPrefix, type ManifestCommand, type ShippedCli, userAgentOf } from "./shipped.ts";

type Cached = Command.Cached & { load(): Promise<Command.Class> };

/**
 * The part of oclif's Config that a command of the CLI itself, and its --help, read,
 * built from the shipped package.json and manifest instead of loading every plugin
 * (oclif's Config.load is a fifth of a command's start). Only used when no user plugin
 * is installed and nothing else is unusual (see launch.ts); the CLI tests run every
 * command through it, and launch.test.ts compares its help with oclif's own.
 */
export function manifestConfig(cli: ShippedCli): Config {
  const { pjson, bin, root } = cli;
  const prefix = envPrefix(bin);
  const byId = new Map<string, Cached>();
  const listed: Cached[] = [];
  const loaders = new Map<string, Promise<Command.Class>>();
  const plugin = { name: pjson.name, alias: pjson.name, type: "core", root, pjson, commands: [] as Cached[] };
  const load = (command: ManifestCommand) => {
    let loading = loaders.get(command.id);
    if (loading === undefined) {
      const path = join(root, ...(command.relativePath ?? []));
      // The CLIs' bundles are CommonJS (tooling/tsup/hot-chunk.ts): a command's file is required,
      // not imported (import() would take it through the ES module loader and its CommonJS lexer).
      const loaded: Promise<{ default?: Command.Class }> =
        typeof require === "function" ? Promise.resolve().then(() => require(path)) : import(pathToFileURL(path).href);
      loading = loaded.then((module) => {
        const Class = module.default;
        if (Class === undefined) throw new Error(`${path} has no default export (a command class)`);
        Class.id = command.id;
        (Class as { plugin?: unknown }).plugin = plugin;
        return Class;
      });
      loaders.set(command.id, loading);
    }
    return loading;
  };
  for (const command of new Set(cli.commands.values())) {
    const cached = { ...command, load: () => load(command) } as unknown as Cached;
    byId.set(command.id, cached);
    listed.push(cached);
    plugin.commands.push(cached);
    for (const alias of command.aliases ?? []) {
      const entry = { ...cached, id: alias } as Cached;
      byId.set(alias, entry);
      listed.push(entry);
    }
    for (const alias of command.hiddenAliases ?? []) byId.set(alias, { ...cached, id: alias, hidden: true } as Cached);
  }
  const topics = [...cli.topics].map((name) => ({
    name,
    description: pjson.oclif.topics?.[name]?.description,
    hidden: pjson.oclif.topics?.[name]?.hidden ?? false,
  }));
  const version = pjson.version;
  const platform = process.platform;
  const arch = osArch() === "ia32" ? "x86" : osArch();
  const config = {
    name: pjson.name,
    version,
    bin,
    dirname: cli.dirname,
    root,
    pjson,
    platform,
    arch,
    windows: platform === "win32",
    shell: "",
    userAgent: userAgentOf(pjson),
    topicSeparator: " ",
    flexibleTaxonomy: false,
    isSingleCommandCLI: false,
    theme: undefined,
    plugins: new Map([[pjson.name, plugin]]),
    commands: listed,
    commandIDs: [...byId.keys()],
    topics,
    findCommand: (id: string) => byId.get(id),
    findTopic: (name: string) => topics.find((topic) => topic.name === name),
    findMatches: () => [],
    getPluginsList: () => [plugin],
    // No plugin declares a hook (launch.ts takes oclif's full start when one could).
    runHook: async () => ({ failures: [], successes: [] }),
    scopedEnvVar: (key: string) => process.env[`${prefix}${key}`],
    scopedEnvVarKey: (key: string) => `${prefix}${key}`,
    scopedEnvVarKeys: (key: string) => [`${prefix}${key}`],
    scopedEnvVarTrue: (key: string) => ["true", "1"].includes(process.env[`${prefix}${key}`] ?? ""),
  };
  return config as unknown as Config & Interfaces.Config;
}
