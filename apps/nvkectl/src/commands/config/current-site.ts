import { NvkectlCommand } from "../../base.ts";

export default class ConfigCurrentSite extends NvkectlCommand<typeof ConfigCurrentSite> {
  static override summary = "Print the name of the site commands act on.";
  static override description = "That is the active site, or the one --site (or NVKECTL_SITE) names.";

  static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> --site edge"];

  override async run(): Promise<void> {
    const site = await this.site();
    await this.out(site.name);
  }
}
