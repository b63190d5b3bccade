import { defineErrorCodes } from "./catalogue.ts";
import { ExitCode } from "./exit-codes.ts";

/**
 * The codes any command can end with: the top-level wrapping of a failure that is no user
 * error (a bug, a usage error the argument parser found).
 */
export const errorCodes = defineErrorCodes("errors", {
  INTERNAL: {
    exitCode: ExitCode.Internal,
    meaning: "An unexpected failure inside the tool: a bug. Rerun with -v and report the output.",
  },
  USAGE: { exitCode: ExitCode.Usage, meaning: "The command line is wrong: unknown flag, missing argument, bad value." },
  UNKNOWN_COMMAND: {
    exitCode: ExitCode.UnknownCommand,
    meaning: "No command has that name; the closest commands are suggested.",
  },
});
