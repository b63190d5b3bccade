import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How reading the stack config can fail. */
export const errorCodes = defineErrorCodes("stack-config", {
  STACK_CONFIG_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The stack config file named does not exist or cannot be read.",
  },
  STACK_CONFIG_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The stack config is not valid YAML or breaks its schema; every problem is listed with its line and key.",
  },
  STACK_CONFIG_UNFILLED: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The stack config still holds REPLACE_* placeholders; each is listed with its key path, and nothing was changed.",
  },
  STACK_CREDENTIAL_MISSING: {
    exitCode: ExitCode.Precondition,
    meaning: "The environment variable the stack config names for a credential is not set or is empty.",
  },
});
