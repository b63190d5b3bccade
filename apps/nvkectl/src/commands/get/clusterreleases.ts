import { Args, outputFlag } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { clusterReleaseColumns } from "../../columns.ts";
import { listReleases } from "../../services/releases.ts";

export default class GetClusterReleases extends NvkectlCommand<typeof GetClusterReleases> {
  static override aliases = ["get:clusterrelease"];
  static override summary = "List the site's ClusterReleases, or show one.";
  static override description =
    `A ClusterRelease is what a cluster's control plane is built from: a Kubernetes version, a MachineImage and the components and charts installed on it. With NAME, only that one is shown (still as a list with -o json and -o yaml); an unknown NAME exits 4.`;

  static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> -o wide"];

  static override args = {
    name: Args.string({ description: "Show only the ClusterRelease with this name." }),
  };

  static override flags = {
    output: outputFlag(),
  };

  override async run(): Promise<void> {
    const client = await this.controller();
    await this.printList(this.flags.output, clusterReleaseColumns(new Date()), (add) =>
      listReleases({
        client,
        kind: "clusterrelease",
        name: this.args.name,
        onPage: add,
      }),
    );
  }
}
