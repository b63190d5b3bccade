import { dryRunFlag, Flags, parseDuration, runProgress } from "@nodekit/cli-kit";
import { contextFlag, NvkectlCommand } from "../base.ts";
import { uninstall } from "../services/uninstall.ts";

export default class Uninstall extends NvkectlCommand<typeof Uninstall> {
  static override summary = "Remove the NVKE controller stack the install record says is installed.";
  static override description =
    `The reverse plan of what the install record (the ConfigMap kube-system/nvkectl-install-record the install writes) says was installed, last item first: the client-networks NetworkPolicy; each deploy path item (helm uninstall --wait for a chart item whose release is there, kubectl delete of each recorded object for a manifest item); the NICo credentials (the Secrets and the NicoIdentity); the lab StorageClass; Cluster API (clusterctl delete --include-crd --include-namespace of each provider, the core provider last, then cert-manager, which clusterctl init installed and clusterctl delete leaves: every object clusterctl labelled clusterctl.cluster.x-k8s.io/core=cert-manager); the CRDs of the manifest items and the namespaces the install created; and the record itself, last, so that a run that stops midway can be run again or continued with --from-item. Nothing the record does not name is removed: the site cluster is left as site bootstrap left it.

Before anything runs, and in a dry run alike, the record is read (none: exit 4, nothing is changed), kubectl, helm and clusterctl are asked their versions, and the site cluster is read: the tenant clusters (Cluster API Clusters; while any exists the uninstall refuses, exit 5, unless --force), the installed providers and the Helm releases. --dry-run prints every call the run makes, in order, one copy-pasteable line each; run it first.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --dry-run",
    "<%= config.bin %> <%= command.id %> --kubeconfig my-tier0-site.kubeconfig",
    {
      description: "Continue after a failure, from the item it named:",
      command: "<%= config.bin %> <%= command.id %> --from-item cluster-api",
    },
  ];

  static override flags = {
    kubeconfig: Flags.string({
      description:
        "The site cluster's kubeconfig (a site admin's). Default: the active site's (or --site's); with no site configured, the one kubectl would use (KUBECONFIG, every file it lists, or ~/.kube/config).",
    }),
    context: contextFlag,
    force: Flags.boolean({
      description: "Uninstall although tenant clusters exist: they are left running without their management plane.",
    }),
    "from-item": Flags.string({
      description: "Start at this item of the plan (after a failure); the items before it are skipped.",
    }),
    "dry-run": dryRunFlag,
    output: Flags.option({
      char: "o",
      description: "With --dry-run: print the plan document as json or yaml instead of shell lines.",
      options: ["json", "yaml"] as const,
    })(),
    "work-dir": Flags.string({
      description:
        "The install's work directory (helm's and clusterctl's HOME are kept there). Default: $XDG_STATE_HOME/nvkectl/install/<site>.",
    }),
  };

  override async run(): Promise<void> {
    const requestTimeout = (this.flags as { "request-timeout"?: string })["request-timeout"];
    const { target } = await this.siteTarget();
    const progress = this.flags["dry-run"] ? undefined : await this.progress();
    try {
      const { plan } = await uninstall({
        inputs: {
          ...target,
          force: this.flags.force,
          workDir: this.flags["work-dir"],
          requestTimeoutMs:
            requestTimeout === undefined ? undefined : parseDuration(requestTimeout, "--request-timeout"),
        },
        runner: this.processRunner(),
        dryRun: this.flags["dry-run"],
        fromItem: this.flags["from-item"],
        redactor: this.redactor,
        ...(progress === undefined ? {} : { onEvent: runProgress(progress) }),
      });
      if (this.flags["dry-run"]) await this.printPlan(plan, this.flags.output ?? "table");
      else this.logger.info(`uninstalled the NVKE controller stack (${plan.items.length} items)`);
    } finally {
      progress?.close();
    }
  }
}
