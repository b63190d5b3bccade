import { Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { nodePoolView } from "../../columns.ts";
import { DEFAULT_TIMEOUT, fileFlag, objectOutputFlag, waitFlags } from "../../flags.ts";
import { createNodePool, waitForNodePool } from "../../services/nodepools.ts";
import { waitTimings } from "../../services/time.ts";

export default class CreateNodePool extends NvkectlCommand<typeof CreateNodePool> {
  static override aliases = ["create:nodepools"];
  static override summary = "Add a node pool to a tenant cluster from a CreateNodePoolRequest file.";
  static override description =
    `The file holds one CreateNodePoolRequest, as YAML or JSON; the schema is served at /api/docs on the management plane (nvkectl explain createnodepoolrequest), and examples/nico-mock-nodepool.yaml is a starting point. A file holding several documents is rejected: create one pool per invocation.

name, nodeNamePrefix, desiredNodeCount and clusterID are required. --cluster NAME fills clusterID from the cluster's name, so the file need not carry the cluster's ID; a file whose clusterID names another cluster is refused. A pool carries the same nico or infra payload as its cluster, and that is where the node type is chosen. The request is checked before anything is sent: every problem is listed with its field path, and the command exits 3 without creating anything.

nvkectl create nodepool adds workers; the control plane is managed through the cluster's controlPlaneConfig. Provisioning is asynchronous, the same as cluster creation: follow it with nvkectl get nodepools NAME --cluster CLUSTER -w, or pass --wait to return once every node runs.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> -f examples/nico-mock-nodepool.yaml --cluster nico-demo",
    {
      description: "Create it and wait until its nodes run:",
      command: "<%= config.bin %> <%= command.id %> -f workers.yaml --cluster tenant-a --wait",
    },
    {
      description: "Print the pool the controller recorded:",
      command: "<%= config.bin %> <%= command.id %> -f workers.yaml -o yaml",
    },
  ];

  static override flags = {
    file: fileFlag("CreateNodePoolRequest"),
    cluster: Flags.string({
      description: "The cluster to add the pool to, by name: fills the request's clusterID.",
    }),
    output: objectOutputFlag,
    ...waitFlags("Wait until the pool is Ready (every desired node running)."),
  };

  override async run(): Promise<void> {
    const { waitMs: timeoutMs, intervalMs } = waitTimings(this.flags, DEFAULT_TIMEOUT);
    const client = await this.controller();
    let pool = await createNodePool({ client, file: this.flags.file, cluster: this.flags.cluster });
    if (!this.flags.output) {
      await this.out(
        `nodepool "${pool.name}" created in cluster "${pool.clusterName}": ID ${pool.id}, phase ${pool.status.phase}`,
      );
    }
    if (this.flags.wait) {
      const ready = await waitForNodePool({
        client,
        cluster: pool.clusterName,
        pool,
        until: "Ready",
        timeoutMs,
        intervalMs,
      });
      if (ready !== undefined) pool = ready;
      if (!this.flags.output) {
        await this.out(`nodepool "${pool.name}" is ${pool.status.phase}: ${pool.status.readyNodes} nodes running`);
      }
    } else if (!this.flags.output) {
      this.logger.info(
        `follow it with: ${this.config.bin} get nodepools ${pool.name} --cluster ${pool.clusterName} -w`,
      );
    }
    if (this.flags.output) await this.printOne(this.flags.output, nodePoolView(), pool);
  }
}
