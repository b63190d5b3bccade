import { Args, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../base.ts";
import { explain } from "../services/explain.ts";

export default class Explain extends NvkectlCommand<typeof Explain> {
  static override summary = "Describe a kind of object and its fields, from the controller's own API document.";
  static override description =
    `As kubectl explain does: KIND alone describes the kind and lists its fields, with their types and descriptions; KIND.field.field describes that field (a list's or a map's fields are those of its items). The kinds are cluster, nodepool, machineimage, clusterrelease and nodepoolrelease (what get prints), and the request documents the CLI sends: createclusterrequest, clusterpatch, createnodepoolrequest, nodepoolpatch, createmachineimagerequest, createclusterreleaserequest, createnodepoolreleaserequest.

It reads the OpenAPI document the site's controller serves at /api/docs, so it describes what that controller takes. An unknown kind or field exits 4 and lists the ones there are.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> cluster",
    "<%= config.bin %> <%= command.id %> cluster.status.conditions",
    "<%= config.bin %> <%= command.id %> createnodepoolrequest.taints",
    "<%= config.bin %> <%= command.id %> createclusterrequest --recursive",
  ];

  static override args = {
    path: Args.string({ description: "KIND or KIND.field.field…", required: true }),
  };

  static override flags = {
    recursive: Flags.boolean({ description: "List every field below, as a tree, without descriptions." }),
  };

  override async run(): Promise<void> {
    await this.out(
      await explain({ client: await this.controller(), path: this.args.path, recursive: this.flags.recursive }),
    );
  }
}
