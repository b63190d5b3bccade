import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { removeSite } from "../../services/sites.ts";

export default class ConfigDeleteSite extends NvkectlCommand<typeof ConfigDeleteSite> {
  static override summary = "Forget a site.";
  static override description =
    "Removes the site from the config file only; the site itself and its kubeconfig file are not touched. Deleting the active site leaves no site active.";

  static override examples = ["<%= config.bin %> <%= command.id %> lab"];

  static override args = {
    name: Args.string({ description: "A configured site (see config get-sites).", required: true }),
  };

  override async run(): Promise<void> {
    const { site, path, wasActive } = await removeSite({ name: this.args.name });
    await this.out(`Deleted site "${site.name}" from ${path}.`);
    if (wasActive) {
      const next = "choose another with nvkectl config use-site NAME";
      this.logger.warn(`"${site.name}" was the active site; no site is active now`, { site: site.name, next: [next] }, [
        `next: ${next}`,
      ]);
    }
  }
}
