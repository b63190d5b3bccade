import { resolve } from "node:path";
import { decodeUtf8, readInputFile } from "@nodekit/documents";
import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";
import { parseSiteSpec } from "./parse-site-spec.ts";
import type { SiteSpec } from "./schema.ts";

export interface ReadSiteSpecOptions {
  /** Resolves a relative path; default process.cwd(). Problems and messages name the path as given. */
  cwd?: string;
}

/**
 * `parseSiteSpec` over a file, for callers that want the spec or an error:
 * SITE_SPEC_UNREADABLE (NotFound) when the file cannot be read, INPUT_TOO_LARGE over the
 * input limit, SITE_SPEC_FILE_INVALID (InvalidInput) carrying every problem, with line and
 * field, when it is not UTF-8 or breaks the schema.
 */
export async function readSiteSpec(path: string, options: ReadSiteSpecOptions = {}): Promise<SiteSpec> {
  let bytes: Uint8Array;
  try {
    bytes = await readInputFile(resolve(options.cwd ?? process.cwd(), path), { source: path, what: "site spec" });
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(errorCodes.SITE_SPEC_UNREADABLE, `site spec ${path} cannot be read`, {
      why: (error as NodeJS.ErrnoException).code === "ENOENT" ? "there is no such file" : String(error),
      facts: { file: path },
    });
  }
  const decoded = decodeUtf8(bytes, { source: path });
  const parsed =
    decoded.text === undefined
      ? { spec: undefined, problems: decoded.problems }
      : parseSiteSpec(decoded.text, { source: path });
  if (parsed.spec === undefined) {
    const count = parsed.problems.length;
    throw new UserError(
      errorCodes.SITE_SPEC_FILE_INVALID,
      `site spec ${path} has ${count} problem${count === 1 ? "" : "s"}; nothing was changed`,
      { problems: parsed.problems },
    );
  }
  return parsed.spec;
}
