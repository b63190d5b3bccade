import { Args, outputFlag } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { nodePoolColumns } from "../../columns.ts";
import { clusterFlag } from "../../flags.ts";
import { getNodePool, listNodePools } from "../../services/nodepools.ts";

export default class GetNodePools extends NvkectlCommand<typeof GetNodePools> {
  static override aliases = ["get:nodepool"];
  static override summary = "List a cluster's node pools, or show one.";
  static override description =
    `Pool names are unique within a cluster, so --cluster decides which pools are listed and which pool NAME is. DESIRED is the node count asked for; READY the nodes running; PENDING those not provisioned yet. Scaling and deletion are asynchronous: this is where to check on them. -o wide adds the node type, the node name prefix, the release and the controller's message.

An unknown cluster or pool exits 4.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --cluster tenant-a",
    "<%= config.bin %> <%= command.id %> workers --cluster tenant-a -o yaml",
  ];

  static override args = {
    name: Args.string({ description: "A node pool's name. Without it, every pool of the cluster is listed." }),
  };

  static override flags = {
    cluster: clusterFlag,
    output: outputFlag(),
  };

  override async run(): Promise<void> {
    const client = await this.controller();
    const columns = nodePoolColumns(new Date());
    const { cluster, output } = this.flags;
    if (this.args.name !== undefined) {
      await this.printOne(output, columns, await getNodePool({ client, cluster, name: this.args.name }));
      return;
    }
    await this.printList(
      output,
      columns,
      (add) => listNodePools({ client, cluster, onPage: add }),
      `No node pools found in cluster "${cluster}".`,
    );
  }
}
