import { Args, listFlags, outputFlag } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { machineImageView } from "../../columns.ts";
import { selectorFlag } from "../../flags.ts";
import { listReleases, releasesNotFound } from "../../services/releases.ts";
import { checkNamesOrSelector, selectorOf } from "../../services/select.ts";

export default class GetMachineImages extends NvkectlCommand<typeof GetMachineImages> {
  static override aliases = ["get:machineimage"];
  static override summary = "List the site's MachineImages, or show some.";
  static override description =
    `A MachineImage is a node image (a bootable disk or OCI artifact pinned by digest) for one Kubernetes version and architecture. With NAME, only that one is shown (still as a list with -o json and -o yaml); several names show several, and a name that does not exist is named in one error after the others are shown (exit 4). -o name, -o jsonpath=TEMPLATE, --selector, --sort-by, --no-headers and --show-labels work as for get clusters.`;

  static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> -o wide"];

  static override args = {
    name: Args.string({
      description: "Show only the MachineImage with this name; several show several.",
      multiple: true,
    }),
  };

  static override flags = {
    output: outputFlag(),
    selector: selectorFlag,
    ...listFlags,
  };

  override async run(): Promise<void> {
    const names = this.args.name ?? [];
    checkNamesOrSelector(names, this.flags.selector, "MachineImage");
    const selector = selectorOf(this.flags.selector);
    const client = await this.controller();
    let missing: string[] = [];
    await this.printList(this.flags.output, machineImageView(new Date()), async (add) => {
      ({ missing } = await listReleases({ client, kind: "machineimage", names, selector, onPage: add }));
    });
    if (missing.length > 0) throw releasesNotFound("machineimage", missing);
  }
}
