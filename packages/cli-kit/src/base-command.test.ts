import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "@nodekit/test-utils";
import { Config } from "@oclif/core/config";
import { afterEach, describe, expect, it } from "vitest";
import { BaseCommand } from "./base-command.ts";
import { outputFlag } from "./flags.ts";

// BaseCommand.init parses with oclif's parser: on oclif's own Config of a CLI root, a plugin's
// preparse hook applies and a deprecated command is warned about, as in any oclif CLI.

class Read extends BaseCommand<typeof Read> {
  static override flags = { output: outputFlag() };

  async run(): Promise<{ flags: unknown }> {
    return { flags: this.flags };
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** oclif's Config for a CLI root whose package.json declares these hooks (files written beside it). */
async function configWith(hooks: Record<string, string>): Promise<Config> {
  const dir = await tempDir("cli-kit-init-");
  cleanups.push(dir.cleanup);
  await mkdir(join(dir.path, "hooks"));
  const declared: Record<string, string> = {};
  for (const [event, body] of Object.entries(hooks)) {
    await writeFile(join(dir.path, "hooks", `${event}.js`), body);
    declared[event] = `./hooks/${event}.js`;
  }
  await writeFile(
    join(dir.path, "package.json"),
    JSON.stringify({
      name: "fixture-cli",
      version: "1.0.0",
      type: "module",
      oclif: { bin: "fixture", hooks: declared },
    }),
  );
  return Config.load(dir.path);
}

const run = (Class: typeof Read, argv: string[], config: Config) =>
  (new Class(argv, config) as unknown as { _run(): Promise<{ flags: unknown }> })._run();

describe("BaseCommand.init", () => {
  it("parses the command's flags and the global ones", async () => {
    const config = await configWith({});
    expect(await run(Read, ["-o", "json"], config)).toEqual({ flags: { output: "json" } });
    expect(await run(Read, ["-vv", "-o", "json"], config)).toEqual({ flags: { verbose: true, output: "json" } });
  });

  it("runs a plugin's preparse hook before the parse (it may rewrite argv)", async () => {
    const config = await configWith({
      preparse: 'export default async function ({ argv }) { return argv.map((a) => (a === "json" ? "yaml" : a)); }\n',
    });
    expect(await run(Read, ["-o", "json"], config)).toEqual({ flags: { output: "yaml" } });
  });

  it("warns of a deprecated command (oclif's init)", async () => {
    class Old extends Read {
      static override id = "old";
      static override state = "deprecated";
    }
    const config = await configWith({});
    const warnings: string[] = [];
    // oclif's warn writes with console.error.
    const error = console.error;
    console.error = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
    try {
      expect(await run(Old, ["-o", "json"], config)).toEqual({ flags: { output: "json" } });
    } finally {
      console.error = error;
    }
    expect(warnings.join("")).toContain("deprecated");
  });
});
