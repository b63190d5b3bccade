import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "@nodekit/test-utils";
import type { Interfaces } from "@oclif/core";
import { Config } from "@oclif/core/config";
import { afterEach, describe, expect, it } from "vitest";
import { BaseCommand } from "./base-command.ts";
import { outputFlag } from "./flags.ts";

// BaseCommand.init takes the fast parser's answer only when nothing of oclif's init and parse
// would matter: here on oclif's own Config of a CLI root, with and without a plugin's preparse hook.

class Read extends BaseCommand<typeof Read> {
  static override flags = { output: outputFlag() };
  parsedByOclif = false;

  protected override async parse<
    F extends Interfaces.OutputFlags<Interfaces.FlagInput>,
    B extends Interfaces.OutputFlags<Interfaces.FlagInput>,
    A extends Interfaces.OutputArgs<Interfaces.ArgInput>,
  >(options?: Interfaces.Input<F, B, A>, argv?: string[]): Promise<Interfaces.ParserOutput<F, B, A>> {
    this.parsedByOclif = true;
    return super.parse(options, argv);
  }

  async run(): Promise<{ flags: unknown; oclif: boolean }> {
    return { flags: this.flags, oclif: this.parsedByOclif };
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
  (new Class(argv, config) as unknown as { _run(): Promise<{ flags: unknown; oclif: boolean }> })._run();

describe("BaseCommand.init", () => {
  it("parses a plain command line without oclif's parser, with the same flags", async () => {
    const config = await configWith({});
    expect(await run(Read, ["-o", "json"], config)).toEqual({ flags: { output: "json" }, oclif: false });
    // A line the fast parser declines is oclif's.
    expect(await run(Read, ["-vv", "-o", "json"], config)).toEqual({
      flags: { verbose: true, output: "json" },
      oclif: true,
    });
  });

  it("leaves the parse to oclif when a plugin declares a preparse hook (it may rewrite argv)", async () => {
    const config = await configWith({
      preparse: 'export default async function ({ argv }) { return argv.map((a) => (a === "json" ? "yaml" : a)); }\n',
    });
    expect(await run(Read, ["-o", "json"], config)).toEqual({ flags: { output: "yaml" }, oclif: true });
  });

  it("leaves the parse to oclif for a deprecated command (oclif's init warns)", async () => {
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
      expect((await run(Old, ["-o", "json"], config)).oclif).toBe(true);
    } finally {
      console.error = error;
    }
    expect(warnings.join("")).toContain("deprecated");
  });
});
