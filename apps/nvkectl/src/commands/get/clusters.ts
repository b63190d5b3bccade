import { Args } from "@nodekit/cli-kit";
import { errorCodes as coreErrorCodes, UserError } from "@nodekit/errors";
import type { Cluster } from "@nodekit/nvke-api";
import { NvkectlCommand } from "../../base.ts";
import { clusterView } from "../../columns.ts";
import { DEFAULT_TIMEOUT, getWatchFlags } from "../../flags.ts";
import { checkAllSitesUsage, siteView } from "../../services/all-sites.ts";
import { clustersNotFound, getClusters, listClusters, waitForCluster, watchClusters } from "../../services/clusters.ts";
import { checkNamesOrSelector, selectorOf } from "../../services/select.ts";
import { waitTimings } from "../../services/time.ts";

export default class GetClusters extends NvkectlCommand<typeof GetClusters> {
  static override aliases = ["get:cluster"];
  static override summary = "List tenant clusters, or show some (with their IDs); watch or wait for them.";
  static override description =
    `Without NAME, lists every cluster of the site (or those whose labels match --selector), page by page as the controller sends them. With NAME, shows that cluster; its ID is what a node pool's clusterID takes. Several names show those clusters; any that does not exist is named in one error after the others are shown (exit 4).

-o json prints a list as kubectl does, a List whose items are the clusters (jq '.items[]'), and one named cluster as the object itself; -o yaml likewise. -o name prints cluster/NAME lines, -o jsonpath=TEMPLATE fills in a kubectl JSONPath template (a list is {.items[*]}), and -o wide adds the release, the control-plane size, the API endpoint and the controller's message. --sort-by orders the list by a field, --no-headers leaves out the header, --show-labels adds the labels.

--all-sites (-A) lists the clusters of every configured site at once, with a SITE column first (and a site field in -o json); a site that does not answer is named on stderr with its error while the others print, and the command exits 6 (SOME_SITES_FAILED).

Provisioning is asynchronous. --watch (-w) with NAME prints the cluster again each time it changes and returns once it is Ready; without NAME it prints the list, then a row for each cluster that is added or changes, until interrupted (or --timeout). --wait prints nothing until the named clusters are Ready, then shows them. Waiting for one cluster gives up after --timeout (default 10m) with exit code 6; a cluster that turns Failed ends it with exit code 1 and the controller's message.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    { description: "Show one cluster and its ID:", command: "<%= config.bin %> <%= command.id %> tenant-a" },
    { description: "Print only the ID:", command: "<%= config.bin %> <%= command.id %> tenant-a -o jsonpath='{.id}'" },
    {
      description: "The names of the clusters of team a, newest last:",
      command: "<%= config.bin %> <%= command.id %> -l team=a --sort-by .createdAt -o name",
    },
    { description: "Watch a new cluster come up:", command: "<%= config.bin %> <%= command.id %> tenant-a --watch" },
    { description: "Watch every cluster:", command: "<%= config.bin %> <%= command.id %> -w" },
    {
      description: "The clusters of every configured site:",
      command: "<%= config.bin %> <%= command.id %> --all-sites",
    },
    {
      description: "Block until two clusters are Ready, for at most 15 minutes each:",
      command: "<%= config.bin %> <%= command.id %> tenant-a tenant-b --wait --timeout 15m",
    },
  ];

  static override args = {
    name: Args.string({
      description: "A cluster's name; several show several. Without one, every cluster is listed.",
      multiple: true,
    }),
  };

  static override flags = getWatchFlags({ one: "cluster", all: "the list", named: "clusters" });

  override async run(): Promise<void> {
    const { output, watch, wait, selector } = this.flags;
    const names = this.args.name ?? [];
    checkNamesOrSelector(names, selector, "cluster");
    if (this.flags["all-sites"]) {
      checkAllSitesUsage({ kind: "cluster", names });
      const requirements = selectorOf(selector);
      const open = await this.controllerOpener();
      await this.printAcrossSites(output, siteView(clusterView()), async (site) => {
        const clusters: Cluster[] = [];
        await listClusters({
          client: await open(site),
          selector: requirements,
          onPage: (page) => void clusters.push(...page),
        });
        return clusters;
      });
      return;
    }
    if (wait && names.length === 0) {
      throw new UserError(coreErrorCodes.USAGE, "--wait needs the NAME of each cluster to wait for", {
        next: "name them: nvkectl get clusters NAME... --wait (or watch every cluster with -w)",
      });
    }
    if (watch && names.length > 1) {
      throw new UserError(coreErrorCodes.USAGE, "--watch takes one cluster NAME, or none to watch the list", {
        next: "watch one: nvkectl get clusters NAME -w, or wait for several: nvkectl get clusters NAME... --wait",
      });
    }
    const requirements = selectorOf(selector);
    const timings = waitTimings(this.flags, DEFAULT_TIMEOUT);
    await this.showOrWait<Cluster>(this.flags, timings, names, (client) => ({
      view: () => clusterView(),
      list: (onPage) => listClusters({ client, selector: requirements, onPage }),
      watch: (options) => watchClusters({ client, selector: requirements, ...options }),
      get: (names) => getClusters({ client, names }),
      waitReady: (cluster, options) =>
        waitForCluster({ client, name: cluster.name, id: cluster.id, until: "Ready", ...options }),
      notFound: (missing) => clustersNotFound(missing, client.baseUrl),
    }));
  }
}
