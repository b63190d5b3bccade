import { stat } from "node:fs/promises";
import { DEFAULT_MAX_INPUT_BYTES, inputTooLarge } from "@nodekit/documents";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";

/**
 * The one check that a kubeconfig path names a file, before anything is run with it.
 * KUBECONFIG_NOT_FOUND (NotFound) otherwise, naming the path and, when it exists but is not
 * a file or cannot be read, why; INPUT_TOO_LARGE for one over 8 MiB (kubectl and
 * @kubernetes/client-node read it whole).
 */
export async function assertKubeconfig(path: string, what = "kubeconfig"): Promise<void> {
  let why: string | undefined;
  let size: number | undefined;
  try {
    const info = await stat(path);
    if (info.isFile()) size = info.size;
    else why = info.isDirectory() ? "it is a directory" : "it is not a regular file";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    why = code === "ENOENT" ? undefined : `it cannot be read (${code ?? String(error)})`;
  }
  if (size !== undefined) {
    if (size > DEFAULT_MAX_INPUT_BYTES) throw inputTooLarge(path, DEFAULT_MAX_INPUT_BYTES, what);
    return;
  }
  throw new UserError(errorCodes.KUBECONFIG_NOT_FOUND, `${what} ${path} does not exist or is not a file`, {
    facts: { kubeconfig: path },
    ...(why === undefined ? {} : { why }),
  });
}
