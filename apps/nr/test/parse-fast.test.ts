import { join } from "node:path";
import { commandParseInput, parseFast } from "@nodekit/cli-kit";
import { checkFastParser, commandClassesIn, onlyOclifParses, repoRoot } from "@nodekit/test-utils";
import { type Command, Parser } from "@oclif/core";
import { describe, expect, it } from "vitest";

// The fast parser (cli-kit's launch/parse-fast.ts) on every nr command's own definitions,
// as BaseCommand.init passes them: on random command lines it declines or answers exactly
// what oclif's parser answers.

const oclifParse = (Class: typeof Command, argv: string[]) => {
  const input = commandParseInput(Class);
  return Parser.parse(argv, { ...input, flags: { ...input.baseFlags, ...input.flags }, context: {} } as never);
};
const fastParse = (Class: typeof Command, argv: string[]) =>
  parseFast(argv, { ...commandParseInput(Class), context: {} });

describe("nr's commands: the fast parser answers as oclif's does, or declines", async () => {
  const classes = await commandClassesIn<typeof Command>(join(repoRoot, "apps/nr/src/commands"));
  it("lists every command", () => {
    expect(classes.length).toBeGreaterThanOrEqual(2);
  });
  for (const [file, Class] of classes) {
    it(file, async () => {
      const accepted = await checkFastParser(
        commandParseInput(Class),
        { oclif: (argv) => oclifParse(Class, argv), fast: (argv) => fastParse(Class, argv) },
        1000,
      );
      // Plain lines of every command are parsed fast, except where oclif's checks are needed.
      if (onlyOclifParses(commandParseInput(Class))) expect(accepted, file).toBe(0);
      else expect(accepted, file).toBeGreaterThan(0);
    });
  }
});
