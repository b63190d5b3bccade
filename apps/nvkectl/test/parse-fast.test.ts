import { join } from "node:path";
import { commandParseInput, parseFast } from "@nodekit/cli-kit";
import { checkFastParser, commandClassesIn, onlyOclifParses, repoRoot } from "@nodekit/test-utils";
import { type Command, Parser } from "@oclif/core";
import { describe, expect, it } from "vitest";
import GetClusters from "../src/commands/get/clusters.ts";
import GetNodepools from "../src/commands/get/nodepools.ts";

// The fast parser (cli-kit's launch/parse-fast.ts) on every nvkectl command's own definitions,
// as BaseCommand.init passes them: on random command lines it declines or answers exactly
// what oclif's parser answers.

const oclifParse = (Class: typeof Command, argv: string[]) => {
  const input = commandParseInput(Class);
  return Parser.parse(argv, { ...input, flags: { ...input.baseFlags, ...input.flags }, context: {} } as never);
};
const fastParse = (Class: typeof Command, argv: string[]) =>
  parseFast(argv, { ...commandParseInput(Class), context: {} });

describe("nvkectl's commands: the fast parser answers as oclif's does, or declines", async () => {
  const classes = await commandClassesIn<typeof Command>(join(repoRoot, "apps/nvkectl/src/commands"));
  it("lists every command", () => {
    expect(classes.length).toBeGreaterThanOrEqual(29);
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

describe("the reads' usual command lines are parsed fast", () => {
  const same = async (Class: typeof Command, argv: string[]) => {
    const fast = await fastParse(Class, argv);
    expect(fast, argv.join(" ")).toBeDefined();
    const { flags, args } = await oclifParse(Class, argv);
    expect(fast).toStrictEqual({ flags, args });
    return fast;
  };

  it("get clusters -o json, get clusters NAME -o wide --site lab, get nodepools --cluster X, -v", async () => {
    expect((await same(GetClusters, ["-o", "json"]))?.flags.output).toBe("json");
    expect(await same(GetClusters, ["tenant-a", "-o", "wide", "--site", "lab"])).toMatchObject({
      flags: { output: "wide", site: "lab" },
      args: { name: ["tenant-a"] },
    });
    expect((await same(GetNodepools, ["--cluster", "X"]))?.flags.cluster).toBe("X");
    expect((await same(GetClusters, ["-v"]))?.flags.verbose).toBe(true);
  });
});
