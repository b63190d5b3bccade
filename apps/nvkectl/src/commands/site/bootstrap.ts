import { dryRunFlag, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { bootstrapSite } from "../../services/bootstrap.ts";

export default class SiteBootstrap extends NvkectlCommand<typeof SiteBootstrap> {
  static override summary = "Create the site's management cluster (kind on nerdctl) and write <site>.kubeconfig.";
  static override description =
    `Checks first, and reports every problem at once: nerdctl and containerd on the host, and kind, helm, kubectl and clusterctl on PATH, each with the version found and the version needed; then a TCP connection to each site spec host's nvke-agent port (concurrently, with a timeout), naming the hosts that do not answer. Then creates the kind cluster named after the site, on nerdctl, and writes <site>.kubeconfig (mode 0600) beside the site spec. A cluster of that name that exists already is left as it is.

--dry-run runs the checks and prints the calls it would make.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --dry-run",
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml",
  ];

  static override flags = {
    sitespec: Flags.string({ description: "The site spec (sitespec generate writes it).", required: true }),
    "kubeconfig-dir": Flags.string({ description: "Where to write <site>.kubeconfig. Default: beside the site spec." }),
    "dry-run": dryRunFlag,
    "reach-timeout": Flags.integer({
      description: "How long each host's TCP check may take, in seconds.",
      default: 3,
      min: 1,
    }),
  };

  override async run(): Promise<void> {
    const { plan, kubeconfig } = await bootstrapSite({
      siteSpec: this.flags.sitespec,
      kubeconfigDir: this.flags["kubeconfig-dir"],
      runner: this.processRunner(),
      dryRun: this.flags["dry-run"],
      reachTimeoutMs: this.flags["reach-timeout"] * 1000,
    });
    if (this.flags["dry-run"]) await this.printPlan(plan);
    else await this.out(kubeconfig);
  }
}
