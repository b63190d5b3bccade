import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LAUNCH_INDEX, launchIndexOf, type ManifestCommand, readShippedCli, readShippedPackage } from "./shipped.ts";

const command: ManifestCommand = {
  id: "get:clusters",
  aliases: ["get:cluster"],
  hiddenAliases: [],
  pluginName: "demo",
  pluginType: "core",
  relativePath: ["dist", "commands", "get", "clusters.js"],
  strict: false,
  summary: "List tenant clusters.",
  description: "List tenant clusters, or show some.",
  examples: ["<%= config.bin %> get clusters"],
  args: { names: { name: "names", description: "cluster names" } },
  flags: {
    site: { name: "site", type: "option", helpGroup: "GLOBAL", summary: "The site to use.", multiple: false },
    output: { name: "output", char: "o", type: "option", options: ["json", "yaml"], description: "Output format." },
    watch: { name: "watch", char: "w", type: "boolean", allowNo: false, description: "Watch." },
  },
};

describe("launchIndexOf", () => {
  it("keeps what a start reads and drops the help texts", () => {
    // What a start reads is kept as it is: everything but the help texts (and the flags' own).
    const { summary: _summary, description: _description, examples: _examples, args: _args, ...kept } = command;
    expect(launchIndexOf({ version: "1.2.3", commands: { "get:clusters": command } })).toEqual({
      version: "1.2.3",
      commands: {
        "get:clusters": {
          ...kept,
          flags: {
            site: { name: "site", type: "option", helpGroup: "GLOBAL" },
            output: { name: "output", char: "o", type: "option" },
            watch: { name: "watch", char: "w", type: "boolean", allowNo: false },
          },
        },
      },
    });
  });
});

describe("readShippedCli", () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  async function shipped(index: { version: string } | undefined) {
    root = await mkdtemp(join(tmpdir(), "cli-kit-shipped-"));
    const pjson = { name: "demo", version: "1.2.3", oclif: { bin: "demo", topicSeparator: " " } };
    await writeFile(join(root, "package.json"), JSON.stringify(pjson));
    await writeFile(
      join(root, "oclif.manifest.json"),
      JSON.stringify({ version: "1.2.3", commands: { "get:clusters": command } }),
    );
    if (index !== undefined) {
      await mkdir(join(root, "dist"));
      await writeFile(join(root, LAUNCH_INDEX), JSON.stringify(index));
    }
    return root;
  }

  it("plans from the launch index, and shows help from the manifest", async () => {
    const dir = await shipped(
      launchIndexOf({ version: "1.2.3", commands: { "get:clusters": command } }, "dist/hot-ABCD1234.js"),
    );
    const pkg = readShippedPackage(dir);
    // The index names the bundle's hot file (the launcher loads it with its code cache); the manifest does not.
    expect(readShippedCli(dir, pkg, "index")?.hot).toBe("dist/hot-ABCD1234.js");
    expect(readShippedCli(dir, pkg)?.hot).toBeUndefined();
    expect(readShippedCli(dir, pkg, "index")?.commands.get("get:cluster")?.description).toBeUndefined();
    expect(readShippedCli(dir, pkg, "index")?.commands.get("get:cluster")?.relativePath).toEqual(command.relativePath);
    expect(readShippedCli(dir, pkg)?.commands.get("get:cluster")?.description).toBe(command.description);
  });

  it("reads the manifest when there is no index, or one of another version (a partial upgrade)", async () => {
    for (const index of [undefined, { version: "1.2.2", commands: {} }]) {
      const dir = await shipped(index);
      const cli = readShippedCli(dir, readShippedPackage(dir), "index");
      expect(cli?.commands.get("get:clusters")?.description, JSON.stringify(index)).toBe(command.description);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
