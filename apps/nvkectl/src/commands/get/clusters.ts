import { Args, Flags, outputFlag } from "@nodekit/cli-kit";
import { errorCodes as coreErrorCodes, UserError } from "@nodekit/errors";
import { NvkectlCommand } from "../../base.ts";
import { clusterColumns } from "../../columns.ts";
import { pollIntervalFlag, timeoutFlag } from "../../flags.ts";
import { getCluster, listClusters, waitForCluster } from "../../services/clusters.ts";
import { parseDuration } from "../../services/time.ts";

export default class GetClusters extends NvkectlCommand<typeof GetClusters> {
  static override aliases = ["get:cluster"];
  static override summary = "List tenant clusters, or show one (with its ID); watch or wait for it to become Ready.";
  static override description =
    `Without NAME, lists every cluster of the site, page by page as the controller sends them. With NAME, shows that cluster; its ID is what a node pool's clusterID takes. An unknown NAME exits 4.

-o json prints a list as one JSON array and a named cluster as one object; -o yaml likewise. -o wide adds the release, the control-plane size, the API endpoint and the controller's message.

Provisioning is asynchronous. --watch (-w) prints the cluster again each time its phase changes and returns once it is Ready. --wait prints nothing until the cluster is Ready, then shows it. Both need NAME and give up after --timeout (default 10m) with exit code 6; a cluster that turns Failed ends them with exit code 1 and the controller's message.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    { description: "Show one cluster and its ID:", command: "<%= config.bin %> <%= command.id %> tenant-a" },
    { description: "Print only the ID:", command: "<%= config.bin %> <%= command.id %> tenant-a -o json | jq -r .id" },
    { description: "Watch a new cluster come up:", command: "<%= config.bin %> <%= command.id %> tenant-a --watch" },
    {
      description: "Block until it is Ready, for at most 15 minutes:",
      command: "<%= config.bin %> <%= command.id %> tenant-a --wait --timeout 15m",
    },
  ];

  static override args = {
    name: Args.string({ description: "A cluster's name. Without it, every cluster is listed." }),
  };

  static override flags = {
    output: outputFlag(),
    watch: Flags.boolean({
      char: "w",
      description: "Print the cluster each time its phase changes, until it is Ready.",
      exclusive: ["wait"],
    }),
    wait: Flags.boolean({
      description: "Wait silently until the cluster is Ready, then show it.",
      exclusive: ["watch"],
    }),
    timeout: timeoutFlag,
    "poll-interval": pollIntervalFlag,
  };

  override async run(): Promise<void> {
    const { output, watch, wait, name } = { ...this.flags, name: this.args.name };
    if ((watch || wait) && name === undefined) {
      throw new UserError(coreErrorCodes.USAGE, `--${watch ? "watch" : "wait"} needs a cluster NAME`, {
        next: "name the cluster: nvkectl get clusters NAME --watch",
      });
    }
    const client = await this.controller();
    const columns = clusterColumns(new Date());
    if (name === undefined) {
      await this.printList(output, columns, (add) => listClusters({ client, onPage: add }));
      return;
    }
    if (!watch && !wait) {
      await this.printOne(output, columns, await getCluster({ client, name }));
      return;
    }
    let first = true;
    const cluster = await waitForCluster({
      client,
      name,
      until: "Ready",
      timeoutMs: parseDuration(this.flags.timeout, "--timeout"),
      intervalMs: parseDuration(this.flags["poll-interval"], "--poll-interval"),
      onChange: async (seen) => {
        if (!watch) return;
        await this.printOne(output, clusterColumns(new Date()), seen, first);
        first = false;
      },
    });
    if (wait && cluster !== undefined) await this.printOne(output, clusterColumns(new Date()), cluster);
  }
}
