import { Args, Flags } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { configureSite } from "../../services/sites.ts";

export default class ConfigSetSite extends NvkectlCommand<typeof ConfigSetSite> {
  static override summary = "Add a site, or change one: the management plane's API and its cluster's kubeconfig.";
  static override description =
    `A site is an NVKE management plane: --url is its controller API and --kubeconfig the site cluster's kubeconfig (get providers and get kubeconfig read the cluster with it, and the controller API commands use it to mint their token). The first site added becomes the active site; --activate makes any other one active.

The CLI sends a bearer token to --url. A plain http:// URL to an address that is not loopback is accepted with a warning: use it from a trusted network only, or put a TLS endpoint in front of it and name that.

The sites are kept in $XDG_CONFIG_HOME/nvkectl/config.yaml (~/.config/nvkectl/config.yaml; NVKECTL_CONFIG overrides the path), written with mode 0600.`;

  static override examples = [
    {
      description: "Add the site a bootstrap left behind (a relative --kubeconfig is stored as an absolute path):",
      command: "<%= config.bin %> <%= command.id %> lab --url http://10.0.0.5:30080 --kubeconfig ./lab.kubeconfig",
    },
    {
      description: "Point an existing site at a TLS endpoint and make it the active site:",
      command:
        "<%= config.bin %> <%= command.id %> lab --url https://nvke.lab.example.com --kubeconfig ~/sites/lab.kubeconfig --activate",
    },
  ];

  static override args = {
    name: Args.string({
      description: "Site name: lowercase letters, digits and '-', at most 63 characters.",
      required: true,
    }),
  };

  static override flags = {
    url: Flags.string({ description: "The NVKE controller API, http:// or https://.", required: true }),
    kubeconfig: Flags.string({ description: "The site cluster's kubeconfig file.", required: true }),
    activate: Flags.boolean({ description: "Make this the active site." }),
  };

  override async run(): Promise<void> {
    const result = await configureSite({
      name: this.args.name,
      url: this.flags.url,
      kubeconfig: this.flags.kubeconfig,
      activate: this.flags.activate,
    });
    if (result.warning) this.logger.warn(result.warning, { site: result.site.name, url: result.site.url });
    await this.out(`Site "${result.site.name}" ${result.created ? "created" : "modified"}.`);
    if (result.activated) await this.out(`Switched to site "${result.site.name}".`);
  }
}
