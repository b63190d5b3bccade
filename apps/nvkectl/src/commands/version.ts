import { Flags } from "@nodekit/cli-kit";
import { dump } from "js-yaml";
import { contextFlag, NvkectlCommand } from "../base.ts";
import { versionLines, versions } from "../services/version.ts";

export default class Version extends NvkectlCommand<typeof Version> {
  static override summary =
    "Print nvkectl's version, the controller API's, the site cluster's Kubernetes version and the installed release.";
  static override description =
    `As kubectl version does: the client's version first, then what the site answers: the NVKE controller API's version (the info.version of its API document at /api/docs), the site cluster's Kubernetes version (kubectl version), and what the install record (the ConfigMap kube-system/nvkectl-install-record the install writes) says is installed: the release, the deploy path and when. A site without an install record says so.

When the site does not answer, what is known is printed and the command fails with the error (exit 6), as kubectl version does; --client prints the client's version only and asks nothing. -o json and -o yaml print all of it: clientVersion, site, controller, siteCluster and installed (null when nothing is installed).

With no site configured, the site cluster is the one kubectl would use — KUBECONFIG (every file it lists, merged as kubectl merges them) or ~/.kube/config — and --context picks a context as kubectl's does; no controller is asked then.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    "<%= config.bin %> <%= command.id %> -o json --site lab",
    "<%= config.bin %> <%= command.id %> --client",
  ];

  static override flags = {
    client: Flags.boolean({ description: "Print the client's version only; the site is not asked." }),
    context: contextFlag,
    output: Flags.option({
      char: "o",
      description: "Print the versions as json or yaml.",
      options: ["json", "yaml"] as const,
    })(),
  };

  override async run(): Promise<void> {
    const { report, failure } = await versions({
      client: { version: this.config.version },
      clientOnly: this.flags.client,
      site: async () => {
        const { site, ...cluster } = await this.siteCluster();
        // No site configured: the cluster KUBECONFIG (or ~/.kube/config) names, and no controller.
        if (site === undefined) return { cluster };
        return { name: site.name, cluster, controller: () => this.controller() };
      },
    });
    if (this.flags.output === "json") await this.out(JSON.stringify(report, null, 2), { raw: true });
    else if (this.flags.output === "yaml") await this.out(dump(report, { lineWidth: -1 }), { raw: true });
    else await this.out(versionLines(report).join("\n"));
    if (failure !== undefined) throw failure;
  }
}
