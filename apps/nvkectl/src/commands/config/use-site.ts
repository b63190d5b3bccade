import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../../base.ts";
import { activateSite } from "../../services/sites.ts";

export default class ConfigUseSite extends NvkectlCommand<typeof ConfigUseSite> {
  static override summary = "Make a site the active one.";
  static override description =
    "Commands act on the active site unless --site (or NVKECTL_SITE) names another for one invocation.";

  static override examples = ["<%= config.bin %> <%= command.id %> lab"];

  static override args = {
    name: Args.string({ description: "A configured site (see config get-sites).", required: true }),
  };

  override async run(): Promise<void> {
    const { site } = await activateSite({ name: this.args.name });
    await this.out(`Switched to site "${site.name}".`);
  }
}
