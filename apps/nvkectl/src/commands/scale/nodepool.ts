import { Args, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { nodePoolView } from "../../columns.ts";
import { clusterFlag, objectOutputFlag } from "../../flags.ts";
import { scaleNodePool } from "../../services/nodepools.ts";

export default class ScaleNodePool extends NvkectlCommand<typeof ScaleNodePool> {
  static override aliases = ["scale:nodepools"];
  static override summary = "Set a node pool's desired node count.";
  static override description =
    `Pool names are unique within a cluster, so --cluster decides which pool is scaled. desiredNodeCount is the only field this command changes; the API accepts more (nvkectl patch nodepool), but this command sends nothing else. There is no confirmation prompt.

Scaling is asynchronous: the command returns once the controller has recorded the new count, printing the count before and after, and the management plane provisions or tears down nodes to match it. A lower count removes only pending nodes that provisioning has not started; running nodes stay until you delete them. A scale-up the controller refuses, such as one the cluster's pod CIDR has no room for, is shown with the controller's own message and exits 8.`;

  static override examples = ["<%= config.bin %> <%= command.id %> workers --cluster tenant-a --replicas 5"];

  static override args = {
    name: Args.string({ description: "The node pool's name.", required: true }),
  };

  static override flags = {
    cluster: clusterFlag,
    replicas: Flags.integer({ description: "The desired node count (0 to 5000).", required: true, min: 0, max: 5000 }),
    output: objectOutputFlag,
  };

  override async run(): Promise<void> {
    const { pool, from, to } = await scaleNodePool({
      client: await this.controller(),
      cluster: this.flags.cluster,
      name: this.args.name,
      replicas: this.flags.replicas,
    });
    if (this.flags.output) await this.printOne(this.flags.output, nodePoolView(), pool);
    else await this.out(`nodepool "${pool.name}" scaled: ${from} → ${to}`);
  }
}
