import { stat } from "node:fs/promises";
import { delimiter, join, resolve } from "node:path";
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

/** Where the kubeconfig kubectl would use comes from. */
export type KubeconfigOrigin = "KUBECONFIG" | "~/.kube/config";

/**
 * The kubeconfig files kubectl, helm and clusterctl read when none is named: KUBECONFIG's
 * list (its files that exist, in order: kubectl skips a listed file that does not exist),
 * else ~/.kube/config. KUBECONFIG_NOT_FOUND when none of them exists, naming every one.
 */
export async function defaultKubeconfig(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): Promise<{ files: string[]; from: KubeconfigOrigin; listed: string[] }> {
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter((path) => path !== "");
  if (listed.length === 0) {
    const file = join(home, ".kube", "config");
    await assertKubeconfig(file);
    return { files: [file], from: "~/.kube/config", listed: [file] };
  }
  const absolute = listed.map((path) => resolve(path));
  const exists = await Promise.all(
    absolute.map((path) =>
      stat(path).then(
        () => true,
        () => false,
      ),
    ),
  );
  const files = absolute.filter((_, i) => exists[i]);
  if (files.length === 0) {
    const [only] = absolute;
    if (absolute.length === 1 && only !== undefined) await assertKubeconfig(only);
    throw new UserError(
      errorCodes.KUBECONFIG_NOT_FOUND,
      `none of the kubeconfigs KUBECONFIG lists exists: ${absolute.join(", ")}`,
      {
        facts: { kubeconfig: absolute.join(delimiter) },
      },
    );
  }
  // Each one that is there is checked as a kubeconfig is (a directory, one too large).
  for (const file of files) await assertKubeconfig(file);
  return { files, from: "KUBECONFIG", listed: absolute };
}
