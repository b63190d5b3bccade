import { Args, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { pollIntervalFlag, timeoutFlag } from "../../flags.ts";
import { deleteCluster, waitForCluster } from "../../services/clusters.ts";
import { parseDuration } from "../../services/time.ts";

export default class DeleteCluster extends NvkectlCommand<typeof DeleteCluster> {
  static override aliases = ["delete:clusters"];
  static override summary = "Delete a tenant cluster and its node pools.";
  static override description =
    `Deletion is asynchronous: the command returns once the controller has accepted it, and the cluster shows phase Deleting until the controller has removed it. There is no confirmation prompt. --wait returns only once the cluster is gone (or --timeout passes, exit 6).`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> tenant-a",
    "<%= config.bin %> <%= command.id %> tenant-a --wait --timeout 20m",
  ];

  static override args = {
    name: Args.string({ description: "The cluster's name.", required: true }),
  };

  static override flags = {
    wait: Flags.boolean({ description: "Wait until the cluster is gone." }),
    timeout: timeoutFlag,
    "poll-interval": pollIntervalFlag,
  };

  override async run(): Promise<void> {
    const client = await this.controller();
    const cluster = await deleteCluster({ client, name: this.args.name });
    await this.out(`cluster "${cluster.name}" deleting (ID ${cluster.id})`);
    if (this.flags.wait) {
      await waitForCluster({
        client,
        name: cluster.name,
        id: cluster.id,
        until: "gone",
        timeoutMs: parseDuration(this.flags.timeout, "--timeout"),
        intervalMs: parseDuration(this.flags["poll-interval"], "--poll-interval"),
      });
      await this.out(`cluster "${cluster.name}" deleted`);
    } else {
      this.logger.info(`check on it with: ${this.config.bin} get clusters ${cluster.name}`);
    }
  }
}
