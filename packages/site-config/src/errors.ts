import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How reading and changing the site configuration can fail. */
export const errorCodes = defineErrorCodes("site-config", {
  CONFIG_UNREADABLE: {
    exitCode: ExitCode.Precondition,
    meaning: "The site configuration file exists but cannot be read (permissions, a directory in its place).",
  },
  CONFIG_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The site configuration file is not valid YAML or breaks its schema; it was not written over.",
  },
  SITE_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "A site's name, URL or kubeconfig path is not valid; nothing was written.",
  },
  NO_ACTIVE_SITE: { exitCode: ExitCode.NotFound, meaning: "No site is active and none was named." },
  SITE_NOT_FOUND: { exitCode: ExitCode.NotFound, meaning: "No site of that name is configured." },
});
