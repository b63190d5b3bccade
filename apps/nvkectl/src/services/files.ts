import { UserError } from "@nodekit/errors";
import { errorCodes } from "../errors.ts";

/** Write a whole file or nothing: a temporary file renamed into place. */
export async function writeFileAtomic(path: string, content: string, mode: number): Promise<void> {
  // Loaded here, not at the top: most runs write to stdout and need not pay for it.
  const { default: writeFileAtomicLib } = await import("write-file-atomic");
  try {
    await writeFileAtomicLib(path, content, { mode });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UserError(errorCodes.OUTPUT_NOT_WRITTEN, `cannot write ${path}: ${code}`, {
      next: "check that the directory exists and that you may write to it",
    });
  }
}
