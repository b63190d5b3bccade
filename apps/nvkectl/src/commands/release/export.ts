import { Args, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { registryAccess, registryFlags } from "../../flags.ts";
import { exportRelease } from "../../services/release-artifacts.ts";

export default class ReleaseExport extends NvkectlCommand<typeof ReleaseExport> {
  static override summary = "Write a published release's description (verifies nothing).";
  static override description =
    `Reads the release description REF names and writes it as published (JSON): to stdout, or to --output-file. The manifest and the description are checked against their digests, but no signature is verified and no listed artifact is looked up: run it only on a reference release verify accepted, best the registry/repository@sha256:… it printed. install --release takes the file.

Registry credentials come from the environment or docker's and helm's config files, as for release verify.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> registry.example.com/nvke/release@sha256:… --output-file release.json",
  ];

  static override args = {
    ref: Args.string({
      description: "The release, best as the registry/repository@sha256:… release verify printed.",
      required: true,
    }),
  };

  static override flags = {
    "output-file": Flags.string({ description: "Write the description to this file instead of stdout." }),
    force: Flags.boolean({
      description: "Replace --output-file even when another user owns it; the new file is yours.",
      dependsOn: ["output-file"],
    }),
    ...registryFlags,
  };

  override async run(): Promise<void> {
    this.logger.warn(
      `export verifies nothing: no signature of ${this.args.ref} was checked. Use it only on a reference release verify accepted.`,
    );
    const exported = await exportRelease({
      reference: this.args.ref,
      outputFile: this.flags["output-file"],
      force: this.flags.force,
      access: { ...registryAccess(this.flags, (message) => this.logger.warn(message)), redactor: this.redactor },
    });
    if (exported.writtenTo !== undefined)
      this.logger.info(`wrote the description of ${exported.reference} to ${exported.writtenTo}`);
    else await this.out(exported.text);
  }
}
