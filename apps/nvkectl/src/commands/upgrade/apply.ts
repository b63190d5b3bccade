import { dryRunFlag, Flags, parseDuration, runProgress } from "@nodekit/cli-kit";
import { dump } from "js-yaml";
import { NvkectlCommand, upgradeInputFlags, workDirFlag } from "../../base.ts";
import { registryAccess } from "../../flags.ts";
import { shippedDeployPath } from "../../services/shipped.ts";
import { upgradePlanLines } from "../../services/upgrade.ts";
import { upgradeApply } from "../../services/upgrade-apply.ts";
import { resumeHint } from "../install.ts";

export default class UpgradeApply extends NvkectlCommand<typeof UpgradeApply> {
  static override summary = "Upgrade the site to a newer release or deploy path, as upgrade plan shows it.";
  static override description =
    `Takes the inputs upgrade plan takes (--sitespec, --stack-config, a newer --release or --deploy-path) and applies the upgrade it shows, through the install's own plan and runner. Before anything runs, and in a dry run alike, it reads and checks everything the install does (the documents, kubectl, helm and clusterctl, the nodes, the installed providers; with --release, every artifact the upgrade pulls or pins is hashed again from the registry, every byte), reads the install record (none: exit 4) and computes the upgrade plan from it; then it refuses, changing nothing (exit 5):

- what the plan refuses (UPGRADE_REFUSED): a downgrade of the release, a chart or a provider; a Cluster API contract skipped, going back or not known; a provider the target no longer installs;
- a site that drifted from its record (UPGRADE_SITE_DRIFTED): a recorded Cluster API provider not installed, or at a version that is neither the recorded one nor the upgrade's; a recorded chart item's Helm release missing, or of a chart version that is neither; an object the install applied itself (the record's inventory) gone, unless the upgrade no longer renders it.

Then it runs the install's plan for the new inputs: the providers the plan upgrades go through clusterctl upgrade apply (their components from the provider repository or, with --release, pulled from the release by digest), clusterctl init installs any new one, every deploy path item is applied again (helm upgrade --install, server-side apply), the SPIRE patch is made again, and the last item prunes what is no longer rendered and writes the new install record. --dry-run prints every call the run makes, in order, exactly. A failure stops at its item and names it; --from-item ITEM continues from there (a part the stopped run already moved is the upgrade's, not drift). -o json or -o yaml prints the upgrade plan and the items run (with --dry-run: the install's plan document).`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --release release-0.10.json --dry-run",
    "NVKE_NICO_API_KEY=… <%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --release release-0.10.json",
    {
      description: "Continue after a failure, from the item it named:",
      command:
        "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --release release-0.10.json --from-item nvke-controller",
    },
  ];

  static override flags = {
    ...upgradeInputFlags("The site cluster's kubeconfig (a site admin's)."),
    "from-item": Flags.string({
      description: "Start at this item of the plan (after a failure); the items before it are skipped.",
    }),
    "dry-run": dryRunFlag,
    output: Flags.option({
      char: "o",
      description:
        "Print the upgrade plan and the items run as json or yaml (with --dry-run: the install's plan document).",
      options: ["json", "yaml"] as const,
    })(),
    "work-dir": workDirFlag,
  };

  override async run(): Promise<void> {
    const requestTimeout = (this.flags as { "request-timeout"?: string })["request-timeout"];
    const progress = this.flags["dry-run"] ? undefined : await this.progress();
    try {
      const result = await upgradeApply({
        inputs: {
          siteSpec: this.flags.sitespec,
          stackConfig: this.flags["stack-config"],
          deployPath: this.flags["deploy-path"] ?? (await shippedDeployPath(this.config.root)),
          ...(await this.siteTarget()).target,
          workDir: this.flags["work-dir"],
          redactor: this.redactor,
          release: this.flags.release,
          registry: registryAccess(this.flags, (message) => this.logger.warn(message)),
          requestTimeoutMs:
            requestTimeout === undefined ? undefined : parseDuration(requestTimeout, "--request-timeout"),
        },
        runner: this.processRunner(),
        dryRun: this.flags["dry-run"],
        fromItem: this.flags["from-item"],
        ...(progress === undefined ? {} : { onEvent: runProgress(progress) }),
      });
      if (this.flags["dry-run"]) {
        await this.printPlan(result.plan, this.flags.output ?? "table");
        return;
      }
      const document = { upgrade: result.upgrade, ran: result.ran };
      if (this.flags.output === "json") await this.out(JSON.stringify(document, null, 2), { raw: true });
      else if (this.flags.output === "yaml") await this.out(dump(document, { lineWidth: -1 }), { raw: true });
      else {
        await this.out(upgradePlanLines(result.upgrade).join("\n"));
        this.logger.info(
          `upgraded site ${result.upgrade.site} to ${result.upgrade.to.release ?? `deploy path ${result.upgrade.to.deployPath}`} (${result.ran.length} items run)`,
        );
      }
    } catch (error) {
      throw resumeHint(error, this.config.bin, this.argv, "upgrade apply");
    } finally {
      progress?.close();
    }
  }
}
