import { Args, Flags, listFlags, outputFlag } from "@nodekit/cli-kit";
import { errorCodes as coreErrorCodes, UserError } from "@nodekit/errors";
import type { NodePool } from "@nodekit/nvke-api";
import { NvkectlCommand } from "../../base.ts";
import { nodePoolView } from "../../columns.ts";
import { clusterFlag, DEFAULT_TIMEOUT, pollIntervalFlag, selectorFlag, timeoutFlag } from "../../flags.ts";
import {
  getNodePools,
  listNodePools,
  nodePoolsNotFound,
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

An unknown cluster or pool exits 4.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --cluster tenant-a",
    "<%= config.bin %> <%= command.id %> workers --cluster tenant-a -o yaml",
    {
      description: "Wait until a new pool's nodes all run:",
      command: "<%= config.bin %> <%= command.id %> workers --cluster tenant-a --wait",
    },
    { description: "Watch the cluster's pools:", command: "<%= config.bin %> <%= command.id %> --cluster tenant-a -w" },
  ];

  static override args = {
    name: Args.string({
      description: "A node pool's name; several show several. Without one, every pool of the cluster is listed.",
      multiple: true,
    }),
  };

  static override flags = {
    cluster: clusterFlag,
    output: outputFlag(),
    selector: selectorFlag,
    ...listFlags,
    watch: Flags.boolean({
      char: "w",
      description:
        "With NAME: print the pool each time it changes, until it is Ready. Without: print the pools, then each pool that changes, until interrupted.",
      exclusive: ["wait"],
    }),
    wait: Flags.boolean({
      description: "Wait silently until the named pools are Ready, then show them.",
      exclusive: ["watch"],
    }),
    timeout: timeoutFlag,
    "poll-interval": pollIntervalFlag,
  };

  override async run(): Promise<void> {
    const { cluster, output, selector, watch, wait } = this.flags;
    const names = this.args.name ?? [];
    checkNamesOrSelector(names, selector, "node pool");
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
    const { intervalMs, timeoutMs, waitMs } = waitTimings(this.flags, DEFAULT_TIMEOUT);
    const client = await this.controller();
    const view = nodePoolView();

    if (names.length === 0 && watch) {
      const printer = await this.watchPrinter(output, view);
      await watchNodePools({
        client,
        cluster,
        selector: requirements,
        intervalMs,
        timeoutMs,
        onChange: (pools) => printer.print(pools),
      });
      return;
    }
    if (names.length === 0) {
      await this.printList(
        output,
        view,
        (add) => listNodePools({ client, cluster, selector: requirements, onPage: add }),
        `No node pools found in cluster "${cluster}".`,
      );
      return;
    }

    const { found, missing } = await getNodePools({ client, cluster, names });
    if (watch || wait) {
      if (missing.length > 0) throw nodePoolsNotFound(missing, cluster);
      const printer = watch ? await this.watchPrinter(output, view) : undefined;
      const ready: NodePool[] = [];
      for (const pool of found) {
        const last = await waitForNodePool({
          client,
          cluster,
          pool,
          until: "Ready",
          timeoutMs: waitMs,
          intervalMs,
          onChange: (seen) => printer?.print([seen]),
        });
        if (last !== undefined) ready.push(last);
      }
      if (wait) await this.printFound(output, () => nodePoolView(), ready, names.length);
      return;
    }
    await this.printFound(output, () => nodePoolView(), found, names.length);
    if (missing.length > 0) throw nodePoolsNotFound(missing, cluster);
  }
}
