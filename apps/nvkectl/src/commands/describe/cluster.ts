import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { readClusterDescription, renderClusterDescription } from "../../services/describe.ts";

export default class DescribeCluster extends NvkectlCommand<typeof DescribeCluster> {
  static override aliases = ["describe:clusters"];
  static override summary = "Show a tenant cluster in full: its conditions, control plane, node pools and their nodes.";
  static override description =
    `As clusterctl describe cluster does for a Cluster API cluster: the cluster's facts (ID, phase, Kubernetes version and release, endpoint, kubeconfig Secret, network, labels), its conditions (Ready, ControlPlaneReady, WorkersReady, Deleting) with how long each has held, a tree of the control plane and each node pool with every node and its state, the releases they run, and the most recent transitions, newest first. Everything comes from the controller API in a few reads; nothing is changed.

For the same data as JSON or YAML, use nvkectl get clusters NAME -o yaml and nvkectl get nodepools --cluster NAME -o yaml. An unknown NAME exits 4.`;

  static override examples = ["<%= config.bin %> <%= command.id %> tenant-a"];

  static override args = {
    name: Args.string({ description: "The cluster's name.", required: true }),
  };

  override async run(): Promise<void> {
    const description = await readClusterDescription({ client: await this.controller(), name: this.args.name });
    await this.out(renderClusterDescription(description, new Date()));
  }
}
