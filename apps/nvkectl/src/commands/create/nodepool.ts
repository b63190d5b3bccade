import { NvkectlCommand } from "../../base.ts";
import { nodePoolColumns } from "../../columns.ts";
import { fileFlag, objectOutputFlag } from "../../flags.ts";
import { createNodePool } from "../../services/nodepools.ts";

export default class CreateNodePool extends NvkectlCommand<typeof CreateNodePool> {
  static override aliases = ["create:nodepools"];
  static override summary = "Add a node pool to a tenant cluster from a CreateNodePoolRequest file.";
  static override description =
    `The file holds one CreateNodePoolRequest, as YAML or JSON; the schema is served at /api/docs on the management plane, and examples/nico-mock-nodepool.yaml is a starting point. A file holding several documents is rejected: create one pool per invocation.

name, nodeNamePrefix, desiredNodeCount and clusterID are required; nvkectl get clusters NAME reports the cluster's ID. A pool carries the same nico or infra payload as its cluster, and that is where the node type is chosen. The request is checked before anything is sent: every problem is listed with its field path, and the command exits 3 without creating anything.

nvkectl create nodepool adds workers; the control plane is managed through the cluster's controlPlaneConfig. Provisioning is asynchronous, the same as cluster creation: follow it with nvkectl get nodepools --cluster CLUSTER.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> -f examples/nico-mock-nodepool.yaml",
    {
      description: "Print the pool the controller recorded:",
      command: "<%= config.bin %> <%= command.id %> -f workers.yaml -o yaml",
    },
  ];

  static override flags = {
    file: fileFlag("CreateNodePoolRequest"),
    output: objectOutputFlag,
  };

  override async run(): Promise<void> {
    const pool = await createNodePool({ client: await this.controller(), file: this.flags.file });
    if (this.flags.output) {
      await this.printOne(this.flags.output, nodePoolColumns(new Date()), pool);
      return;
    }
    await this.out(
      `nodepool "${pool.name}" created in cluster "${pool.clusterName}": ID ${pool.id}, phase ${pool.status.phase}`,
    );
    this.logger.info(`follow it with: ${this.config.bin} get nodepools --cluster ${pool.clusterName}`);
  }
}
