import { ExitCode } from "@nodekit/errors";
import { execute } from "@oclif/core/execute";

/**
 * The entry point of the CLIs' bin scripts. It loads oclif's `execute` entry rather than
 * the package index (a third fewer modules at start-up), and nothing else, so `--version`
 * and `--help` stay cheap; commands load what they need when they run.
 */
export async function run(binUrl: string, argv: string[] = process.argv.slice(2)): Promise<void> {
  process.stdout.on("error", stopOnBrokenPipe);
  await execute({ args: argv, dir: binUrl });
}

/**
 * The reader closed the pipe (`nvkectl get clusters | head`): stop at once and say nothing,
 * with the status of a process killed by SIGPIPE, as kubectl has. Without this the write
 * error either surfaced as "unexpected failure" or left oclif waiting for a drain that never
 * comes (Node's exit 13, "unsettled top-level await").
 */
function stopOnBrokenPipe(error: NodeJS.ErrnoException): void {
  if (error.code === "EPIPE") process.exit(ExitCode.BrokenPipe);
  throw error;
}
