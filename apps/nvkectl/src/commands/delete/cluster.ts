import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { DEFAULT_TIMEOUT, ignoreNotFoundFlag, waitFlags } from "../../flags.ts";
import { clustersNotFound, deleteClusters, waitForCluster } from "../../services/clusters.ts";
import { waitTimings } from "../../services/time.ts";

export default class DeleteCluster extends NvkectlCommand<typeof DeleteCluster> {
  static override aliases = ["delete:clusters"];
  static override summary = "Delete tenant clusters and their node pools.";
  static override description =
    `Deletion is asynchronous: the command returns once the controller has accepted it, and each cluster shows phase Deleting until the controller has removed it. There is no confirmation prompt. Several names delete several; a name that does not exist is named in one error once the others are deleted (exit 4), unless --ignore-not-found. --wait returns only once every cluster is gone (or --timeout passes for one, exit 6).`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> tenant-a",
    "<%= config.bin %> <%= command.id %> tenant-a tenant-b --wait --timeout 20m",
    {
      description: "In a script that may run twice:",
      command: "<%= config.bin %> <%= command.id %> tenant-a --ignore-not-found --wait",
    },
  ];

  static override args = {
    name: Args.string({ description: "The cluster's name; several delete several.", required: true, multiple: true }),
  };

  static override flags = {
    "ignore-not-found": ignoreNotFoundFlag,
    ...waitFlags("Wait until the clusters are gone."),
  };

  override async run(): Promise<void> {
    const { waitMs: timeoutMs, intervalMs } = waitTimings(this.flags, DEFAULT_TIMEOUT);
    const client = await this.controller();
    const { found, missing } = await deleteClusters({ client, names: this.args.name });
    for (const cluster of found) await this.out(`cluster "${cluster.name}" deleting (ID ${cluster.id})`);
    if (this.flags.wait) {
      for (const cluster of found) {
        await waitForCluster({ client, name: cluster.name, id: cluster.id, until: "gone", timeoutMs, intervalMs });
        await this.out(`cluster "${cluster.name}" deleted`);
      }
    } else if (found.length > 0) {
      this.logger.info(`check on it with: ${this.config.bin} get clusters ${found.map((c) => c.name).join(" ")}`);
    }
    if (missing.length > 0 && !this.flags["ignore-not-found"]) throw clustersNotFound(missing, client.baseUrl);
  }
}
