import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { clusterFlag } from "../../flags.ts";
import { deleteNodePool } from "../../services/nodepools.ts";

export default class DeleteNodePool extends NvkectlCommand<typeof DeleteNodePool> {
  static override aliases = ["delete:nodepools"];
  static override summary = "Delete a node pool; its nodes are drained first.";
  static override description =
    `Pool names are unique within a cluster, so --cluster decides which pool is deleted. Deletion is asynchronous and the nodes are drained before removal: the command returns once the controller has accepted it; check on it with nvkectl get nodepools --cluster CLUSTER. There is no confirmation prompt.

On a management plane with the control-plane controller off, deleting a cluster's last joined control-plane node pool is refused with the NVKE controller's own message (exit 8) — delete the cluster instead.`;

  static override examples = ["<%= config.bin %> <%= command.id %> workers --cluster tenant-a"];

  static override args = {
    name: Args.string({ description: "The node pool's name.", required: true }),
  };

  static override flags = {
    cluster: clusterFlag,
  };

  override async run(): Promise<void> {
    const pool = await deleteNodePool({
      client: await this.controller(),
      cluster: this.flags.cluster,
      name: this.args.name,
    });
    await this.out(`nodepool "${pool.name}" deleting: its nodes are drained, then removed`);
    this.logger.info(`check on it with: ${this.config.bin} get nodepools --cluster ${this.flags.cluster}`);
  }
}
