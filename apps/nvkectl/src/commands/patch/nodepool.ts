import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { nodePoolView } from "../../columns.ts";
import { clusterFlag, objectOutputFlag, patchFlags } from "../../flags.ts";
import { patchNodePool } from "../../services/nodepools.ts";

export default class PatchNodePool extends NvkectlCommand<typeof PatchNodePool> {
  static override aliases = ["patch:nodepools"];
  static override summary = "Change fields of a node pool with a JSON merge patch.";
  static override description =
    `The patch is a JSON merge patch (RFC 7396), given as JSON or YAML text with --patch (as kubectl patch -p takes it) or as a JSON or YAML file with --patch-file. Only the fields in the patch are changed; null clears a field: {"labels": {"gpu": null}} removes one label, {"taints": null} removes every taint, {"nodePoolReleaseName": null} drops the pinned release.

The fields a patch may change: desiredNodeCount (nvkectl scale nodepool does only that), nodePoolReleaseName, labels, taints. name, clusterID, nodeNamePrefix, role and the nico or infra payload cannot change once the pool exists. The patch is checked before it is sent: text that is not valid JSON or YAML, or a field it may not change, exits 3 and changes nothing; the controller's own refusal is shown as it sent it (exit 8, or 5 for a conflict such as an object being deleted).`;

  static override examples = [
    `<%= config.bin %> <%= command.id %> workers --cluster tenant-a --patch '{"labels": {"gpu": "a100"}}'`,
    `<%= config.bin %> <%= command.id %> workers --cluster tenant-a --patch '{"taints": null}'`,
  ];

  static override args = {
    name: Args.string({ description: "The node pool's name.", required: true }),
  };

  static override flags = {
    cluster: clusterFlag,
    ...patchFlags,
    output: objectOutputFlag,
  };

  override async run(): Promise<void> {
    const pool = await patchNodePool({
      client: await this.controller(),
      cluster: this.flags.cluster,
      name: this.args.name,
      patch: this.flags.patch,
      patchFile: this.flags["patch-file"],
    });
    if (this.flags.output) await this.printOne(this.flags.output, nodePoolView(), pool);
    else await this.out(`nodepool "${pool.name}" patched`);
  }
}
