import { Args, Flags } from "@nodekit/cli-kit";
import { contextFlag, NvkectlCommand } from "../../base.ts";
import { getTenantKubeconfig } from "../../services/kubeconfig.ts";

export default class GetKubeconfig extends NvkectlCommand<typeof GetKubeconfig> {
  static override summary = "Print a tenant cluster's kubeconfig, or write it to a file.";
  static override description =
    `Reads the kubeconfig Cluster API wrote for the cluster — data key value of Secret <cluster>-kubeconfig in namespace nvke-clusters — directly from the site cluster with the site's kubeconfig (no kubectl needed); with no site configured, with the kubeconfig kubectl would use (KUBECONFIG, or ~/.kube/config), and --context as kubectl's. The Secret appears when the cluster becomes Ready; until then the command exits 4.

Without --output-file the kubeconfig is written to stdout. With it, the file is written atomically with mode 0600 (it holds the cluster's admin credentials), and nothing goes to stdout. The file is never written through a symbolic link, and a file another user owns is replaced only with --force (by a new file of your own).`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> tenant-a > tenant-a.kubeconfig",
    "<%= config.bin %> <%= command.id %> tenant-a --output-file ~/.kube/tenant-a.kubeconfig",
  ];

  static override args = {
    cluster: Args.string({ description: "The tenant cluster's name.", required: true }),
  };

  static override flags = {
    context: contextFlag,
    "output-file": Flags.string({
      description: "Write the kubeconfig to this file (atomically, mode 0600) instead of stdout.",
    }),
    force: Flags.boolean({
      description: "Replace --output-file even when another user owns it; the new file is yours.",
      dependsOn: ["output-file"],
    }),
  };

  override async run(): Promise<void> {
    const result = await getTenantKubeconfig({
      site: await this.siteCluster(),
      cluster: this.args.cluster,
      outputFile: this.flags["output-file"],
      force: this.flags.force,
    });
    if (result.writtenTo)
      this.logger.info(`wrote the kubeconfig of cluster ${this.args.cluster} to ${result.writtenTo}`);
    else await this.out(result.kubeconfig, { raw: true });
  }
}
