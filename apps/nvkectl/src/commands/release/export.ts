import { Args, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { registryAccess, registryFlags } from "../../flags.ts";
import { exportRelease } from "../../services/release-artifacts.ts";

export default class ReleaseExport extends NvkectlCommand<typeof ReleaseExport> {
  static override summary = "Write a published release's description (verifies nothing).";
  static override description =
    `Reads the release description REF names and writes it as published (JSON): to stdout, or to --output-file. The manifest and the description are checked against their digests, but no signature is verified and no listed artifact is looked up: run it only on a reference release verify accepted, best the registry/repository@sha256:… it printed. install --release takes the file.

With --nvkectl PLATFORM (linux/amd64, linux/arm64) it writes nvkectl's single-file executable for that platform, as the release lists it, to --output-file (mode 0755) instead of the description: the artifact's manifest and the file's bytes are checked against their digests before the file appears, and the file's digest is printed on stderr.

Registry credentials come from the environment or docker's and helm's config files, as for release verify.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> registry.example.com/nvke/release@sha256:… --output-file release.json",
    {
      description: "Take nvkectl itself for linux/amd64 from a release verify accepted:",
      command:
        "<%= config.bin %> <%= command.id %> registry.example.com/nvke/release@sha256:… --nvkectl linux/amd64 --output-file nvkectl-linux-x64",
    },
  ];

  static override args = {
    ref: Args.string({
      description: "The release, best as the registry/repository@sha256:… release verify printed.",
      required: true,
    }),
  };

  static override flags = {
    "output-file": Flags.string({ description: "Write the description to this file instead of stdout." }),
    nvkectl: Flags.string({
      description:
        "Write nvkectl's executable for this platform (linux/amd64, linux/arm64) to --output-file instead of the description.",
      helpValue: "PLATFORM",
      dependsOn: ["output-file"],
    }),
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
      nvkectl: this.flags.nvkectl,
      access: { ...registryAccess(this.flags, (message) => this.logger.warn(message)), redactor: this.redactor },
    });
    if (exported.executable !== undefined)
      this.logger.info(
        `wrote nvkectl for ${this.flags.nvkectl} from ${exported.reference} to ${exported.writtenTo} (${exported.executable}, checked)`,
      );
    else if (exported.writtenTo !== undefined)
      this.logger.info(`wrote the description of ${exported.reference} to ${exported.writtenTo}`);
    else await this.out(exported.text);
  }
}
