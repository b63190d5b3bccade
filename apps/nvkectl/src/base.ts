import { BaseCommand, Flags, globalFlags, type Hints } from "@nodekit/cli-kit";
import type { NvkeClient } from "@nodekit/nvke-api";
import type { Site } from "@nodekit/site-config";
import type { Command } from "@oclif/core/command";
import { NVKECTL_HINTS } from "./hints.ts";
import type { SiteCluster } from "./services/kubectl.ts";

/** nvkectl's global flags: the kit's, plus `--site` (NV-1). */
export abstract class NvkectlCommand<T extends typeof Command> extends BaseCommand<T> {
  static override baseFlags = {
    ...globalFlags,
    site: Flags.string({
      description: "Use this site instead of the active one, for this invocation only.",
      helpGroup: "GLOBAL",
      env: "NVKECTL_SITE",
    }),
  };

  protected override hints(): Hints {
    return NVKECTL_HINTS;
  }

  /** The site this invocation acts on: `--site` when given, else the active site (NV-8). */
  protected async site(): Promise<Site> {
    // Loaded on use: commands that need no site (sitespec generate) never pay for reading the config.
    const { currentSite } = await import("./services/sites.ts");
    const { site } = await currentSite({ site: (this.flags as { site?: string }).site });
    return site;
  }

  /** The site cluster, read directly with kubectl and the site's kubeconfig (get providers, get kubeconfig). */
  protected async siteCluster(): Promise<SiteCluster> {
    const site = await this.site();
    return { kubeconfig: site.kubeconfig, runner: this.processRunner() };
  }

  /**
   * The site's NVKE controller API, authenticated per NV-9. Every token is registered with
   * the redactor before it is used, so no log line or error can carry it.
   */
  protected async controller(): Promise<NvkeClient> {
    const { openController } = await import("./services/controller.ts");
    return openController({
      site: await this.site(),
      onToken: (token) => this.redactor.add(token),
      debug: (message, fields) => this.logger.debug(message, fields),
      warn: (message) => this.logger.warn(message),
    });
  }
}
