import { join } from "node:path";
import { commandParseInput, parseFast } from "@nodekit/cli-kit";
import { type CliParsers, describeFastParserOverCommands, repoRoot } from "@nodekit/test-utils";
import { type Command, Parser } from "@oclif/core";

// The fast parser (cli-kit's launch/parse-fast.ts) on every nr command's own definitions,
// as BaseCommand.init passes them: on random command lines it declines or answers exactly
// what oclif's parser answers.

describeFastParserOverCommands({
  cli: "nr",
  dir: join(repoRoot, "apps/nr/src/commands"),
  atLeast: 2,
  parsers: { commandParseInput, parseFast, Parser } as unknown as CliParsers<typeof Command>,
});
