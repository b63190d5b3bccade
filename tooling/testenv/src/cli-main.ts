/**
 * How the testenv and sandbox CLIs end: `main`'s exit code, or, when it throws, what went
 * wrong on stderr and exit 2 for a command line node:util's parseArgs refused (with the
 * usage), exit 1 for anything else. `describeKnown` gives the lines of an error the CLI
 * explains itself; any other error is written with its stack, prefixed with the CLI's name.
 */
export async function runCli(options: {
  name: string;
  usage: string;
  main: () => Promise<number>;
  describeKnown: (error: unknown) => string | undefined;
}): Promise<void> {
  const { name, usage, main, describeKnown } = options;
  try {
    process.exitCode = await main();
  } catch (error) {
    const usageError = String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS");
    const known = usageError ? undefined : describeKnown(error);
    if (usageError) process.stderr.write(`${name}: ${(error as Error).message}\n${usage}\n`);
    else if (known !== undefined) process.stderr.write(`${known}\n`);
    else process.stderr.write(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = usageError ? 2 : 1;
  }
}
