import { ExitCode, UserError } from "@nodekit/errors";
import writeFileAtomicLib from "write-file-atomic";

/** Write a whole file or nothing: a temporary file renamed into place. */
export async function writeFileAtomic(path: string, content: string, mode: number): Promise<void> {
  try {
    await writeFileAtomicLib(path, content, { mode });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UserError("OUTPUT_NOT_WRITTEN", `cannot write ${path}: ${code}`, {
      exitCode: ExitCode.InvalidInput,
      next: "check that the directory exists and that you may write to it",
    });
  }
}
