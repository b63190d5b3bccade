import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** cli-kit's own error codes: what the flag helpers both CLIs share refuse. */
export const errorCodes = defineErrorCodes("cli-kit", {
  INVALID_DURATION: {
    exitCode: ExitCode.Usage,
    meaning: "A duration flag (--timeout, --poll-interval, …) is not a duration such as 90s, 10m or 1h30m.",
  },
});
