import { basename, extname } from "node:path";
import { readInputFile } from "@nodekit/documents";
import { formatProblem, invalidInput, UserError } from "@nodekit/errors";
import { generateSiteSpec } from "@nodekit/sitespec";
import { errorCodes } from "../errors.ts";
import { textOf, writeOutputFile } from "./files.ts";

export interface GenerateSiteSpecFileOptions {
  hostsPath: string;
  siteName?: string | undefined;
  outputFile?: string | undefined;
  /** Replace an output file another user owns. */
  force?: boolean | undefined;
  /** Told about each warning (unknown columns, …) as soon as it is known, also when the run then fails. */
  onWarning?: (warning: string) => void;
}

export interface GenerateSiteSpecFileResult {
  yaml: string;
  hostCount: number;
  writtenTo?: string;
}

/** Read the CSV, generate the spec, and write it only when there is no error at all. */
export async function generateSiteSpecFile(options: GenerateSiteSpecFileOptions): Promise<GenerateSiteSpecFileResult> {
  const bytes = await readInputFile(options.hostsPath, { what: "the hosts CSV" }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error instanceof UserError) throw error;
      throw new UserError(
        error.code === "ENOENT" ? errorCodes.HOSTS_FILE_NOT_FOUND : errorCodes.HOSTS_FILE_UNREADABLE,
        `cannot read the hosts CSV ${options.hostsPath}: ${error.code ?? error.message}`,
        {
          next: "check the path given to --hosts",
        },
      );
    },
  );
  const csvText = textOf(bytes, options.hostsPath, (problems) =>
    invalidInput(errorCodes.SITESPEC_INVALID, options.hostsPath, problems, ["save the hosts CSV as UTF-8 text"]),
  );
  const siteName = options.siteName ?? basename(options.hostsPath, extname(options.hostsPath));
  const result = generateSiteSpec({ csvText, source: options.hostsPath, siteName });
  for (const problem of result.problems)
    if (problem.severity === "warning") options.onWarning?.(formatProblem(problem));
  if (result.yaml === undefined || result.spec === undefined) {
    const next = ["fix every problem listed above and run the command again"];
    if (options.siteName === undefined && result.problems.some((p) => p.source === "site name")) {
      next.unshift("name the site with --site-name (the default comes from the CSV file's name)");
    }
    throw invalidInput(errorCodes.SITESPEC_INVALID, options.hostsPath, result.problems, next);
  }
  const hostCount = result.spec.spec.hosts.length;
  if (options.outputFile === undefined) return { yaml: result.yaml, hostCount };
  await writeOutputFile(options.outputFile, result.yaml, { mode: 0o644, force: options.force, what: "the site spec" });
  return { yaml: result.yaml, hostCount, writtenTo: options.outputFile };
}
