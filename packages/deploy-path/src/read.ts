import { invalidInput } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { type DeployPath, type LoadDeployPathOptions, loadDeployPath } from "./load.ts";

/**
 * `loadDeployPath`, for callers that want the path or an error: DEPLOY_PATH_INVALID
 * (InvalidInput) carrying every problem, with file, line and field.
 */
export async function readDeployPath(dir: string, options: LoadDeployPathOptions = {}): Promise<DeployPath> {
  const loaded = await loadDeployPath(dir, options);
  if (loaded.deployPath === undefined) {
    throw invalidInput(
      errorCodes.DEPLOY_PATH_INVALID,
      `deploy path ${dir}`,
      loaded.problems,
      undefined,
      "nothing was applied",
    );
  }
  return loaded.deployPath;
}
