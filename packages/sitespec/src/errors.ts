import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How reading a site spec file can fail. */
export const errorCodes = defineErrorCodes("sitespec", {
  SITE_SPEC_UNREADABLE: {
    exitCode: ExitCode.NotFound,
    meaning: "The site spec file named does not exist or cannot be read.",
  },
  SITE_SPEC_FILE_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The site spec file breaks its schema; every problem is listed and nothing was changed.",
  },
});
