import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How reading a deploy path can fail. */
export const errorCodes = defineErrorCodes("deploy-path", {
  DEPLOY_PATH_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning:
      "The deploy path (nvke-deploy.yaml and its item directories) has problems; each is listed with its file, line and field, and nothing was applied.",
  },
});
