import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How running an external program can fail, when nothing more specific was said about it. */
export const errorCodes = defineErrorCodes("process", {
  TOOL_NOT_FOUND: { exitCode: ExitCode.Precondition, meaning: "A program the command runs is not on PATH." },
  COMMAND_FAILED: {
    exitCode: ExitCode.CheckFailed,
    meaning: "A program the command ran exited with an error; its last lines of output are shown.",
  },
});
