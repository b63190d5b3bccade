import { decodeUtf8 } from "@nodekit/documents";
import { UserError } from "@nodekit/errors";
import { fsSafeErrorCodes, writeFileSafe } from "@nodekit/fs-safe";
import { errorCodes } from "../errors.ts";

export interface OutputFileOptions {
  mode: number;
  /** `--force`: replace a file another user owns (the new one is ours). */
  force?: boolean | undefined;
  /** The file in words: "the kubeconfig". */
  what: string;
}

/**
 * Writes an `--output-file` whole or not at all (@nodekit/fs-safe): never through a
 * symbolic link, never handing the file to a previous owner, and over another user's file
 * only with --force. A failure to write is OUTPUT_NOT_WRITTEN; a refusal keeps its own code.
 */
export async function writeOutputFile(
  path: string,
  content: string | Uint8Array,
  options: OutputFileOptions,
): Promise<void> {
  try {
    await writeFileSafe(path, content, {
      mode: options.mode,
      replaceOthers: options.force === true,
      what: options.what,
    });
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    if (error.code === fsSafeErrorCodes.FILE_WRITE_FAILED.code) {
      throw new UserError(errorCodes.OUTPUT_NOT_WRITTEN, error.message, {
        why: error.why,
        next: error.next,
        facts: error.facts,
        cause: error,
      });
    }
    if (error.code === fsSafeErrorCodes.FILE_OWNED_BY_OTHER.code) {
      // The hint for this code offers --force only where the command has it: here.
      throw new UserError(error.errorCode, error.message, {
        why: error.why,
        next: error.next,
        facts: { ...error.facts, forceFlag: "--force" },
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * An input file's bytes as text, or INPUT_INVALID-style problems when they are not UTF-8:
 * `invalid` builds the error for the caller's code.
 */
export function textOf(
  bytes: Uint8Array,
  source: string,
  invalid: (problems: ReturnType<typeof decodeUtf8>["problems"]) => Error,
): string {
  const decoded = decodeUtf8(bytes, { source });
  if (decoded.text === undefined) throw invalid(decoded.problems);
  return decoded.text;
}
