import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { clusterView } from "../../columns.ts";
import { objectOutputFlag, patchFlags } from "../../flags.ts";
import { patchCluster } from "../../services/clusters.ts";

export default class PatchCluster extends NvkectlCommand<typeof PatchCluster> {
  static override aliases = ["patch:clusters"];
  static override summary = "Change fields of a tenant cluster with a JSON merge patch.";
  static override description =
    `The patch is a JSON merge patch (RFC 7396), given as JSON or YAML text with --patch (as kubectl patch -p takes it) or as a JSON or YAML file with --patch-file. Only the fields in the patch are changed; every other field keeps its value. An object merges into the field's object key by key (labels: only the labels named change).

To clear a field, set it to null: {"description": null} removes the description, {"labels": {"team": null}} removes the label team and keeps the others, {"labels": null} removes them all.

The fields a patch may change: description, clusterReleaseName or clusterReleaseID (an upgrade), controlPlaneConfig.replicas and controlPlaneConfig.nodeNamePrefix, labels. name, provider, network and the nico or infra payload cannot change once the cluster exists, and id, kubernetesVersion, status, createdAt and updatedAt belong to the controller. The patch is checked before it is sent: text that is not valid JSON or YAML, or a field it may not change, exits 3 and changes nothing. The controller's own refusal is shown as it sent it (exit 8, or 5 for a conflict such as a cluster being deleted).`;

  static override examples = [
    {
      description: "Set the description and a label:",
      command: `<%= config.bin %> <%= command.id %> tenant-a --patch '{"description": "team A", "labels": {"team": "a"}}'`,
    },
    {
      description: "Clear the description and remove the label team:",
      command: `<%= config.bin %> <%= command.id %> tenant-a --patch '{"description": null, "labels": {"team": null}}'`,
    },
    {
      description: "Grow the control plane to three machines, from a file:",
      command: "<%= config.bin %> <%= command.id %> tenant-a --patch-file ha.yaml",
    },
  ];

  static override args = {
    name: Args.string({ description: "The cluster's name.", required: true }),
  };

  static override flags = {
    ...patchFlags,
    output: objectOutputFlag,
  };

  override async run(): Promise<void> {
    const cluster = await patchCluster({
      client: await this.controller(),
      name: this.args.name,
      patch: this.flags.patch,
      patchFile: this.flags["patch-file"],
    });
    if (this.flags.output) await this.printOne(this.flags.output, clusterView(), cluster);
    else await this.out(`cluster "${cluster.name}" patched`);
  }
}
