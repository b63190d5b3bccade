import { join } from "node:path";
import { Flags, parseDuration } from "@nodekit/cli-kit";
import { dump } from "js-yaml";
import { NvkectlCommand, upgradeInputFlags, workDirFlag } from "../../base.ts";
import { upgradePlan, upgradePlanLines } from "../../services/upgrade.ts";

export default class UpgradePlan extends NvkectlCommand<typeof UpgradePlan> {
  static override summary = "Show what an upgrade to a newer release or deploy path would change on the site.";
  static override description =
    `Reads the site's install record (the ConfigMap kube-system/nvkectl-install-record the install writes) and compares it with what the install would record for these inputs: per deploy path item, from → to (chart versions, and each item's digest) and what restarts; per Cluster API provider, from → to with the contract of each version (read from the providers' metadata.yaml, in the provider repository and, with --release, in the components the release carries), under clusterctl's upgrade rules: a provider moves within its contract or to the next one, never back, and every provider follows the core provider's contract. What the upgrade refuses is listed under Refused: a downgrade (of the release, a chart or a provider), a contract skipped or going back, a contract not known, a provider the target no longer installs. It changes nothing; -o json and -o yaml print the plan as data.

It takes the install's inputs (--sitespec, --stack-config, --deploy-path, --release), checked as the install checks them, and the NICo API key from the environment as the install does.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --release release-0.10.json",
    "<%= config.bin %> <%= command.id %> --sitespec sitespec.yaml --stack-config stack.yaml --deploy-path ./deploy/nico -o json",
  ];

  static override flags = {
    ...upgradeInputFlags("The site cluster's kubeconfig."),
    output: Flags.option({
      char: "o",
      description: "Print the plan as json or yaml.",
      options: ["json", "yaml"] as const,
    })(),
    "work-dir": workDirFlag,
  };

  override async run(): Promise<void> {
    const requestTimeout = (this.flags as { "request-timeout"?: string })["request-timeout"];
    const plan = await upgradePlan({
      inputs: {
        siteSpec: this.flags.sitespec,
        stackConfig: this.flags["stack-config"],
        deployPath: this.flags["deploy-path"] ?? join(this.config.root, "..", "..", "deploy", "nico"),
        ...(await this.siteTarget()).target,
        workDir: this.flags["work-dir"],
        redactor: this.redactor,
        release: this.flags.release,
        registry: { plainHttp: this.flags["plain-http"], caFile: this.flags["ca-file"] },
        requestTimeoutMs: requestTimeout === undefined ? undefined : parseDuration(requestTimeout, "--request-timeout"),
      },
      runner: this.processRunner(),
    });
    if (this.flags.output === "json") await this.out(JSON.stringify(plan, null, 2), { raw: true });
    else if (this.flags.output === "yaml") await this.out(dump(plan, { lineWidth: -1 }), { raw: true });
    else await this.out(upgradePlanLines(plan).join("\n"));
  }
}
