import { Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { generateSiteSpecFile } from "../../services/sitespec.ts";

export default class SitespecGenerate extends NvkectlCommand<typeof SitespecGenerate> {
  static override summary = "Generate a site spec from a hosts CSV.";
  static override description =
    `The CSV has a header line. name and ip are required columns; tpm_ek_thumbprint is optional per row and turns on TPM attestation for that host. Every problem in the file is reported with its line, row, column and value, all in one run, and nothing is written when there is any. The format is described in docs/sitespec.md.

Without --output-file the site spec is written to stdout.`;
  static override examples = [
    "<%= config.bin %> <%= command.id %> --hosts hosts.csv --site-name my-tier0-site",
    "<%= config.bin %> <%= command.id %> --hosts hosts.csv --site-name my-tier0-site --output-file my-tier0-site.yaml",
  ];
  static override flags = {
    hosts: Flags.string({ description: "The hosts CSV to read.", required: true }),
    "site-name": Flags.string({
      description: "The site's name (a DNS-1123 label). Defaults to the CSV file's name without extension.",
    }),
    "output-file": Flags.string({
      description: "Write the site spec to this file (atomically; never through a symbolic link) instead of stdout.",
    }),
    force: Flags.boolean({
      description: "Replace --output-file even when another user owns it; the new file is yours.",
      dependsOn: ["output-file"],
    }),
  };

  async run(): Promise<void> {
    const result = await generateSiteSpecFile({
      hostsPath: this.flags.hosts,
      siteName: this.flags["site-name"],
      outputFile: this.flags["output-file"],
      force: this.flags.force,
      onWarning: (warning) => this.logger.warn(warning),
    });
    if (result.writtenTo) this.logger.info(`wrote site spec for ${result.hostCount} hosts to ${result.writtenTo}`);
    else await this.out(result.yaml, { raw: true });
  }
}
