import { Args, Flags } from "@nodekit/cli-kit";
import { errorCodes as coreErrorCodes, UserError } from "@nodekit/errors";
import type { NodePool } from "@nodekit/nvke-api";
import { NvkectlCommand } from "../../base.ts";
import { nodePoolView } from "../../columns.ts";
import { DEFAULT_TIMEOUT, getWatchFlags } from "../../flags.ts";
import { checkAllSitesUsage, siteView } from "../../services/all-sites.ts";
import {
  getNodePools,
  listNodePools,
  nodePoolsNotFound,
  nodePoolsOfSite,
  waitForNodePool,
  watchNodePools,
} from "../../services/nodepools.ts";
import { checkNamesOrSelector, selectorOf } from "../../services/select.ts";
import { waitTimings } from "../../services/time.ts";

export default class GetNodePools extends NvkectlCommand<typeof GetNodePools> {
  static override aliases = ["get:nodepool"];
  static override summary = "List a cluster's node pools, or show some; watch or wait for them.";
  static override description =
    `Pool names are unique within a cluster, so --cluster decides which pools are listed and which pools the names are. DESIRED is the node count asked for; READY the nodes running; PENDING those not provisioned yet. Scaling and deletion are asynchronous: this is where to check on them. -o wide adds the node type, the node name prefix, the release and the controller's message; -o name, -o jsonpath=TEMPLATE, --selector, --sort-by, --no-headers and --show-labels work as for get clusters.

--watch (-w) with NAME prints the pool again each time it changes and returns once it is Ready; without NAME it prints the cluster's pools, then a row for each pool that is added or changes, until interrupted (or --timeout). --wait returns once the named pools are Ready, then shows them (at most --timeout each, default 10m, exit 6).

An unknown cluster or pool exits 4.

--all-sites (-A) lists the pools of every configured site at once, with SITE and CLUSTER columns first (site in -o json): with --cluster, the pools of the cluster of that name on each site that has one; without it, the pools of every cluster. A site that does not answer is named on stderr with its error while the others print, and the command exits 6 (SOME_SITES_FAILED).`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --cluster tenant-a",
    "<%= config.bin %> <%= command.id %> workers --cluster tenant-a -o yaml",
    {
      description: "Wait until a new pool's nodes all run:",
      command: "<%= config.bin %> <%= command.id %> workers --cluster tenant-a --wait",
    },
    { description: "Watch the cluster's pools:", command: "<%= config.bin %> <%= command.id %> --cluster tenant-a -w" },
    {
      description: "Every pool of every cluster, on every configured site:",
      command: "<%= config.bin %> <%= command.id %> -A",
    },
  ];

  static override args = {
    name: Args.string({
      description: "A node pool's name; several show several. Without one, every pool of the cluster is listed.",
      multiple: true,
    }),
  };

  static override flags = {
    cluster: Flags.string({
      description:
        "The cluster the node pools belong to (pool names are unique within a cluster only). Required, except with --all-sites.",
    }),
    ...getWatchFlags({ one: "pool", all: "the pools", named: "pools" }),
  };

  override async run(): Promise<void> {
    const { output, selector, watch, wait } = this.flags;
    const names = this.args.name ?? [];
    checkNamesOrSelector(names, selector, "node pool");
    if (this.flags["all-sites"]) {
      checkAllSitesUsage({ kind: "node pool", names });
      const requirements = selectorOf(selector);
      const open = await this.controllerOpener();
      const { cluster } = this.flags;
      await this.printAcrossSites(
        output,
        siteView(nodePoolView(), { promote: "cluster" }),
        async (site) => nodePoolsOfSite({ client: await open(site), cluster, selector: requirements }),
        cluster === undefined ? undefined : `No node pools found in a cluster "${cluster}" on any site.`,
      );
      return;
    }
    const { cluster } = this.flags;
    if (cluster === undefined) {
      throw new UserError(coreErrorCodes.USAGE, "missing required flag --cluster", {
        next: "name the cluster: nvkectl get nodepools --cluster NAME (or every cluster's pools on every site: -A)",
      });
    }
    if (wait && names.length === 0) {
      throw new UserError(coreErrorCodes.USAGE, "--wait needs the NAME of each node pool to wait for", {
        next: `name them: nvkectl get nodepools NAME... --cluster ${cluster} --wait (or watch every pool with -w)`,
      });
    }
    if (watch && names.length > 1) {
      throw new UserError(
        coreErrorCodes.USAGE,
        "--watch takes one node pool NAME, or none to watch the cluster's pools",
        {
          next: `wait for several instead: nvkectl get nodepools NAME... --cluster ${cluster} --wait`,
        },
      );
    }
    const requirements = selectorOf(selector);
    const timings = waitTimings(this.flags, DEFAULT_TIMEOUT);
    await this.showOrWait<NodePool>(this.flags, timings, names, (client) => ({
      view: () => nodePoolView(),
      list: (onPage) => listNodePools({ client, cluster, selector: requirements, onPage }),
      watch: (options) => watchNodePools({ client, cluster, selector: requirements, ...options }),
      get: (names) => getNodePools({ client, cluster, names }),
      waitReady: (pool, options) => waitForNodePool({ client, cluster, pool, until: "Ready", ...options }),
      notFound: (missing) => nodePoolsNotFound(missing, cluster),
      empty: `No node pools found in cluster "${cluster}".`,
    }));
  }
}
