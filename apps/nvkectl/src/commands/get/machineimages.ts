import { Args, outputFlag } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { machineImageColumns } from "../../columns.ts";
import { listReleases } from "../../services/releases.ts";

export default class GetMachineImages extends NvkectlCommand<typeof GetMachineImages> {
  static override aliases = ["get:machineimage"];
  static override summary = "List the site's MachineImages, or show one.";
  static override description =
    `A MachineImage is a node image (a bootable disk or OCI artifact pinned by digest) for one Kubernetes version and architecture. With NAME, only that one is shown (still as a list with -o json and -o yaml); an unknown NAME exits 4.`;

  static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> -o wide"];

  static override args = {
    name: Args.string({ description: "Show only the MachineImage with this name." }),
  };

  static override flags = {
    output: outputFlag(),
  };

  override async run(): Promise<void> {
    const client = await this.controller();
    await this.printList(this.flags.output, machineImageColumns(new Date()), (add) =>
      listReleases({
        client,
        kind: "machineimage",
        name: this.args.name,
        onPage: add,
      }),
    );
  }
}
