import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How reading an input file or standard input can fail, whoever reads it. */
export const errorCodes = defineErrorCodes("documents", {
  INPUT_TOO_LARGE: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "An input file or standard input is larger than the most that is read (8 MiB unless said otherwise); reading stopped there and nothing was changed.",
  },
});
