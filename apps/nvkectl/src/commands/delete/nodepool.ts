import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { clusterFlag, DEFAULT_TIMEOUT, ignoreNotFoundFlag, waitFlags } from "../../flags.ts";
import { deleteNodePools, nodePoolsNotFound, waitForNodePool } from "../../services/nodepools.ts";
import { waitTimings } from "../../services/time.ts";

export default class DeleteNodePool extends NvkectlCommand<typeof DeleteNodePool> {
  static override aliases = ["delete:nodepools"];
  static override summary = "Delete node pools; their nodes are drained first.";
  static override description =
    `Pool names are unique within a cluster, so --cluster decides which pools are deleted. Deletion is asynchronous and the nodes are drained before removal: the command returns once the controller has accepted it; check on it with nvkectl get nodepools --cluster CLUSTER, or pass --wait to return once the pools are gone. There is no confirmation prompt. Several names delete several; a name that does not exist is named in one error once the others are deleted (exit 4), unless --ignore-not-found.

On a management plane with the control-plane controller off, deleting a cluster's last joined control-plane node pool is refused with the NVKE controller's own message (exit 5) — delete the cluster instead.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> workers --cluster tenant-a",
    "<%= config.bin %> <%= command.id %> gpus spot --cluster tenant-a --wait",
  ];

  static override args = {
    name: Args.string({ description: "The node pool's name; several delete several.", required: true, multiple: true }),
  };

  static override flags = {
    cluster: clusterFlag,
    "ignore-not-found": ignoreNotFoundFlag,
    ...waitFlags("Wait until the pools are gone (their nodes drained and removed)."),
  };

  override async run(): Promise<void> {
    const { cluster } = this.flags;
    const { waitMs: timeoutMs, intervalMs } = waitTimings(this.flags, DEFAULT_TIMEOUT);
    const client = await this.controller();
    const { found, missing } = await deleteNodePools({ client, cluster, names: this.args.name });
    for (const pool of found) await this.out(`nodepool "${pool.name}" deleting: its nodes are drained, then removed`);
    if (this.flags.wait) {
      for (const pool of found) {
        await waitForNodePool({ client, cluster, pool, until: "gone", timeoutMs, intervalMs });
        await this.out(`nodepool "${pool.name}" deleted`);
      }
    } else if (found.length > 0) {
      this.logger.info(`check on it with: ${this.config.bin} get nodepools --cluster ${cluster}`);
    }
    if (missing.length > 0 && !this.flags["ignore-not-found"]) throw nodePoolsNotFound(missing, cluster);
  }
}
