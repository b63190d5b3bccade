import { Args, listFlags, outputFlag } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { clusterReleaseView } from "../../columns.ts";
import { selectorFlag } from "../../flags.ts";
import { listReleases, releasesNotFound } from "../../services/releases.ts";
import { checkNamesOrSelector, selectorOf } from "../../services/select.ts";

export default class GetClusterReleases extends NvkectlCommand<typeof GetClusterReleases> {
  static override aliases = ["get:clusterrelease"];
  static override summary = "List the site's ClusterReleases, or show some.";
  static override description =
    `A ClusterRelease is what a cluster's control plane is built from: a Kubernetes version, a MachineImage and the components and charts installed on it. With NAME, only that one is shown (still as a list with -o json and -o yaml); several names show several, and a name that does not exist is named in one error after the others are shown (exit 4). -o name, -o jsonpath=TEMPLATE, --selector, --sort-by, --no-headers and --show-labels work as for get clusters.`;

  static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> -o wide"];

  static override args = {
    name: Args.string({
      description: "Show only the ClusterRelease with this name; several show several.",
      multiple: true,
    }),
  };

  static override flags = {
    output: outputFlag(),
    selector: selectorFlag,
    ...listFlags,
  };

  override async run(): Promise<void> {
    const names = this.args.name ?? [];
    checkNamesOrSelector(names, this.flags.selector, "ClusterRelease");
    const selector = selectorOf(this.flags.selector);
    const client = await this.controller();
    let missing: string[] = [];
    await this.printList(this.flags.output, clusterReleaseView(new Date()), async (add) => {
      ({ missing } = await listReleases({ client, kind: "clusterrelease", names, selector, onPage: add }));
    });
    if (missing.length > 0) throw releasesNotFound("clusterrelease", missing);
  }
}
