import { execute } from "@oclif/core/execute";

/**
 * The entry point of the CLIs' bin scripts. It loads oclif's `execute` entry rather than
 * the package index (a third fewer modules at start-up), and nothing else, so `--version`
 * and `--help` stay cheap; commands load what they need when they run.
 */
export async function run(binUrl: string, argv: string[] = process.argv.slice(2)): Promise<void> {
  await execute({ args: argv, dir: binUrl });
}
