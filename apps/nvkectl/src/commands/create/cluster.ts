import { NvkectlCommand } from "../../base.ts";
import { clusterView } from "../../columns.ts";
import { DEFAULT_TIMEOUT, fileFlag, objectOutputFlag, waitFlags } from "../../flags.ts";
import { createCluster, waitForCluster } from "../../services/clusters.ts";
import { waitTimings } from "../../services/time.ts";

export default class CreateCluster extends NvkectlCommand<typeof CreateCluster> {
  static override aliases = ["create:clusters"];
  static override summary = "Create a tenant cluster from a CreateClusterRequest file.";
  static override description =
    `The file holds one CreateClusterRequest, as YAML or JSON; the schema is served at /api/docs on the management plane, and examples/capd-cluster.yaml is a starting point. It is checked before anything is sent: every problem is listed with its field path, and the command exits 3 without creating anything.

Provisioning is asynchronous: the command returns once the controller has accepted the cluster and prints its name, ID and phase (Provisioning). Follow it with nvkectl get clusters NAME --watch, or pass --wait to return only once it is Ready.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> -f examples/capd-cluster.yaml",
    {
      description: "Create it and wait until it is Ready:",
      command: "<%= config.bin %> <%= command.id %> -f tenant-a.yaml --wait --timeout 15m",
    },
    {
      description: "Capture the new cluster's ID:",
      command: "<%= config.bin %> <%= command.id %> -f tenant-a.yaml -o json | jq -r .id",
    },
  ];

  static override flags = {
    file: fileFlag("CreateClusterRequest"),
    output: objectOutputFlag,
    ...waitFlags("Wait until the cluster is Ready before returning."),
  };

  override async run(): Promise<void> {
    // Flags are checked before anything is created.
    const { waitMs: timeoutMs, intervalMs } = waitTimings(this.flags, DEFAULT_TIMEOUT);
    const client = await this.controller();
    let cluster = await createCluster({ client, file: this.flags.file });
    if (!this.flags.output) {
      await this.out(`cluster "${cluster.name}" created: ID ${cluster.id}, phase ${cluster.status.phase}`);
    }
    if (this.flags.wait) {
      const ready = await waitForCluster({
        client,
        name: cluster.name,
        id: cluster.id,
        until: "Ready",
        timeoutMs,
        intervalMs,
      });
      if (ready !== undefined) cluster = ready;
      if (!this.flags.output) await this.out(`cluster "${cluster.name}" is ${cluster.status.phase}`);
    } else if (!this.flags.output) {
      this.logger.info(`watch it come up with: ${this.config.bin} get clusters ${cluster.name} --watch`);
    }
    if (this.flags.output) await this.printOne(this.flags.output, clusterView(), cluster);
  }
}
