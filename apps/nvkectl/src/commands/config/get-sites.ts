import { outputFlag } from "@nodekit/cli-kit";
import type { SiteListing } from "@nodekit/site-config";
import { NvkectlCommand } from "../../base.ts";
import { readSites } from "../../services/sites.ts";

export default class ConfigGetSites extends NvkectlCommand<typeof ConfigGetSites> {
  static override summary = "List the configured sites.";
  static override description =
    "CURRENT marks the active site with *. -o json and -o yaml print each site with an `active` field.";

  static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> -o json"];

  static override flags = {
    output: outputFlag(),
  };

  override async run(): Promise<void> {
    const { sites } = await readSites();
    await this.print(
      this.flags.output,
      {
        kind: "site",
        name: (site: SiteListing) => site.name,
        rows: sites,
        columns: [
          // A space, not "": the table prints an empty value as <none>, and kubectl leaves CURRENT blank.
          { header: "current", value: (site: SiteListing) => (site.active ? "*" : " ") },
          { header: "name", value: (site: SiteListing) => site.name },
          { header: "url", value: (site: SiteListing) => site.url },
          { header: "kubeconfig", value: (site: SiteListing) => site.kubeconfig },
        ],
        data: sites.map((site) => ({
          name: site.name,
          url: site.url,
          kubeconfig: site.kubeconfig,
          active: site.active,
        })),
      },
      "No sites configured. Add one with: nvkectl config set-site NAME --url URL --kubeconfig FILE",
    );
  }
}
