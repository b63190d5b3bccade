import { dryRunFlag, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { bootstrapSite } from "../../services/bootstrap.ts";

export default class SiteBootstrap extends NvkectlCommand<typeof SiteBootstrap> {
  static override summary = "Create the site's management cluster (kind on nerdctl) and write <site>.kubeconfig.";
  static override description =
    `Checks first, and reports every problem at once: nerdctl on the host and containerd running (asked through nerdctl version, which only a running daemon answers), and kind (v0.30.0 or newer: the release the pinned node image is built for; kindnet enforces NetworkPolicy from v0.24.0), helm, kubectl and clusterctl on PATH, each with the version found and the version needed; then a TCP connection to each site spec host's nvke-agent port (concurrently, with a timeout), naming the hosts that do not answer.

Then writes <site>.kind.yaml and creates the kind cluster named after the site, on nerdctl, from it: one node of the pinned kindest/node image (by digest); the API server on this host's address on the site's network (--api-server-address, by default the address this host reached the site's hosts from) at port 6443, which kind also names in the API server's certificate and the kubeconfig, so that other machines can use it; and the controller API's NodePort 30080 mapped to port 30080 of this host. It writes <site>.kubeconfig (mode 0600) beside the site spec.

A cluster of that name that exists already is left as it is; if its kubeconfig file is gone, it is written again (kind export kubeconfig).

--dry-run runs the checks and prints the calls it would make (-o json or yaml: the plan document).`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --dry-run",
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml",
    {
      description: "Name the address other machines reach this host at:",
      command: "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --api-server-address 10.20.0.5",
    },
  ];

  static override flags = {
    sitespec: Flags.string({ description: "The site spec (sitespec generate writes it).", required: true }),
    "kubeconfig-dir": Flags.string({
      description: "Where to write <site>.kubeconfig and <site>.kind.yaml. Default: beside the site spec.",
    }),
    "api-server-address": Flags.string({
      description:
        "This host's IP address that the API server listens on and its certificate names. Default: the address this host reaches the site's hosts from.",
    }),
    "dry-run": dryRunFlag,
    output: Flags.option({
      char: "o",
      description: "With --dry-run: print the plan document as json or yaml instead of shell lines.",
      options: ["json", "yaml"] as const,
    })(),
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
      apiServerAddress: this.flags["api-server-address"],
      runner: this.processRunner(),
      dryRun: this.flags["dry-run"],
      reachTimeoutMs: this.flags["reach-timeout"] * 1000,
    });
    if (this.flags["dry-run"]) await this.printPlan(plan, this.flags.output ?? "table");
    else await this.out(kubeconfig);
  }
}
