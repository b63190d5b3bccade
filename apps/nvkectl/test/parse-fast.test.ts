import { join } from "node:path";
import { commandParseInput, parseFast } from "@nodekit/cli-kit";
import { type CliParsers, describeFastParserOverCommands, repoRoot } from "@nodekit/test-utils";
import { type Command, Parser } from "@oclif/core";
import { describe, expect, it } from "vitest";
import GetClusters from "../src/commands/get/clusters.ts";
import GetNodepools from "../src/commands/get/nodepools.ts";

// The fast parser (cli-kit's launch/parse-fast.ts) on every nvkectl command's own definitions,
// as BaseCommand.init passes them: on random command lines it declines or answers exactly
// what oclif's parser answers.

describeFastParserOverCommands({
  cli: "nvkectl",
  dir: join(repoRoot, "apps/nvkectl/src/commands"),
  atLeast: 29,
  parsers: { commandParseInput, parseFast, Parser } as unknown as CliParsers<typeof Command>,
});

const oclifParse = (Class: typeof Command, argv: string[]) => {
  const input = commandParseInput(Class);
  return Parser.parse(argv, { ...input, flags: { ...input.baseFlags, ...input.flags }, context: {} } as never);
};
const fastParse = (Class: typeof Command, argv: string[]) =>
  parseFast(argv, { ...commandParseInput(Class), context: {} });

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
