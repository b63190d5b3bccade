import { NvkectlCommand } from "../../base.ts";
import { clusterReleaseView } from "../../columns.ts";
import { fileFlag, objectOutputFlag } from "../../flags.ts";
import { createRelease } from "../../services/releases.ts";

export default class CreateClusterRelease extends NvkectlCommand<typeof CreateClusterRelease> {
  static override aliases = ["create:clusterreleases"];
  static override summary = "Publish a ClusterRelease from a CreateClusterReleaseRequest file.";
  static override description =
    `A ClusterRelease is what a cluster's control plane is built from: a Kubernetes version, a MachineImage and the components and charts installed on it. A site publishes a MachineImage, a ClusterRelease and a NodePoolRelease before its first tenant cluster; examples/ holds one of each.

The file holds one CreateClusterReleaseRequest, as YAML or JSON; the schema is served at /api/docs on the management plane. It is checked before anything is sent: every problem is listed with its field path, and the command exits 3 without creating anything. A name that exists already exits 5 with the controller's message.`;

  static override examples = ["<%= config.bin %> <%= command.id %> -f examples/clusterrelease.yaml"];

  static override flags = {
    file: fileFlag("CreateClusterReleaseRequest"),
    output: objectOutputFlag,
  };

  override async run(): Promise<void> {
    const created = await createRelease({
      client: await this.controller(),
      kind: "clusterrelease",
      file: this.flags.file,
    });
    if (this.flags.output) await this.printOne(this.flags.output, clusterReleaseView(new Date()), created);
    else await this.out(`clusterrelease "${created.name}" created: ID ${created.id}, version ${created.version}`);
  }
}
