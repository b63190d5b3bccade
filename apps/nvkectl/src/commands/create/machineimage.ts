import { NvkectlCommand } from "../../base.ts";
import { machineImageView } from "../../columns.ts";
import { fileFlag, objectOutputFlag } from "../../flags.ts";
import { createRelease } from "../../services/releases.ts";

export default class CreateMachineImage extends NvkectlCommand<typeof CreateMachineImage> {
  static override aliases = ["create:machineimages"];
  static override summary = "Publish a MachineImage from a CreateMachineImageRequest file.";
  static override description =
    `A MachineImage is a node image (a bootable disk or OCI artifact pinned by digest) for one Kubernetes version and architecture. A site publishes a MachineImage, a ClusterRelease and a NodePoolRelease before its first tenant cluster; examples/ holds one of each.

The file holds one CreateMachineImageRequest, as YAML or JSON; the schema is served at /api/docs on the management plane. It is checked before anything is sent: every problem is listed with its field path, and the command exits 3 without creating anything. A name that exists already exits 5 with the controller's message.`;

  static override examples = ["<%= config.bin %> <%= command.id %> -f examples/machineimage.yaml"];

  static override flags = {
    file: fileFlag("CreateMachineImageRequest"),
    output: objectOutputFlag,
  };

  override async run(): Promise<void> {
    const created = await createRelease({
      client: await this.controller(),
      kind: "machineimage",
      file: this.flags.file,
    });
    if (this.flags.output) await this.printOne(this.flags.output, machineImageView(new Date()), created);
    else await this.out(`machineimage "${created.name}" created: ID ${created.id}, version ${created.version}`);
  }
}
