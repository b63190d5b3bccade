import { NvkectlCommand } from "../../base.ts";
import { nodePoolReleaseView } from "../../columns.ts";
import { fileFlag, objectOutputFlag } from "../../flags.ts";
import { createRelease } from "../../services/releases.ts";

export default class CreateNodePoolRelease extends NvkectlCommand<typeof CreateNodePoolRelease> {
  static override aliases = ["create:nodepoolreleases"];
  static override summary = "Publish a NodePoolRelease from a CreateNodePoolReleaseRequest file.";
  static override description =
    `A NodePoolRelease is what a node pool's workers are built from: a Kubernetes version, a MachineImage and the components on it. A site publishes a MachineImage, a ClusterRelease and a NodePoolRelease before its first tenant cluster; examples/ holds one of each.

The file holds one CreateNodePoolReleaseRequest, as YAML or JSON; the schema is served at /api/docs on the management plane. It is checked before anything is sent: every problem is listed with its field path, and the command exits 3 without creating anything. A name that exists already exits 5 with the controller's message.`;

  static override examples = ["<%= config.bin %> <%= command.id %> -f examples/nodepoolrelease.yaml"];

  static override flags = {
    file: fileFlag("CreateNodePoolReleaseRequest"),
    output: objectOutputFlag,
  };

  override async run(): Promise<void> {
    const created = await createRelease({
      client: await this.controller(),
      kind: "nodepoolrelease",
      file: this.flags.file,
    });
    if (this.flags.output) await this.printOne(this.flags.output, nodePoolReleaseView(new Date()), created);
    else await this.out(`nodepoolrelease "${created.name}" created: ID ${created.id}, version ${created.version}`);
  }
}
