import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** The permanent error codes of `@nodekit/version-pins` (listed in docs/errors.md). */
export const errorCodes = defineErrorCodes("version-pins", {
  PINS_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The pin set (from the platform or the local config defaults) has problems; nothing was installed.",
  },
  PINS_DIGEST_MISSING: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "A tool would be downloaded, but the pins give no sha256 digest for it on this architecture; nothing was downloaded.",
  },
  PINS_TOOL_MISSING: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The pin set does not name a tool the command needs.",
  },
});
