import { Args, outputFlag } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { nodePoolReleaseColumns } from "../../columns.ts";
import { listReleases } from "../../services/releases.ts";

export default class GetNodePoolReleases extends NvkectlCommand<typeof GetNodePoolReleases> {
  static override aliases = ["get:nodepoolrelease"];
  static override summary = "List the site's NodePoolReleases, or show one.";
  static override description =
    `A NodePoolRelease is what a node pool's workers are built from: a Kubernetes version, a MachineImage and the components on it. With NAME, only that one is shown (still as a list with -o json and -o yaml); an unknown NAME exits 4.`;

  static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> -o wide"];

  static override args = {
    name: Args.string({ description: "Show only the NodePoolRelease with this name." }),
  };

  static override flags = {
    output: outputFlag(),
  };

  override async run(): Promise<void> {
    const client = await this.controller();
    await this.printList(this.flags.output, nodePoolReleaseColumns(new Date()), (add) =>
      listReleases({
        client,
        kind: "nodepoolrelease",
        name: this.args.name,
        onPage: add,
      }),
    );
  }
}
