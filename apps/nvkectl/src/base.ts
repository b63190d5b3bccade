import { BaseCommand, globalFlags } from "@nodekit/cli-kit";
import type { NvkeClient } from "@nodekit/nvke-api";
import { currentSite, type Site } from "@nodekit/site-config";
import { type Command, Flags } from "@oclif/core";
import { openController } from "./services/controller.ts";
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

  /** The site this invocation acts on: `--site` when given, else the active site (NV-8). */
  protected async site(): Promise<Site> {
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
    return openController({
      site: await this.site(),
      onToken: (token) => this.redactor.add(token),
      debug: (message, fields) => this.logger.debug(message, fields),
      warn: (message) => this.logger.warn(message),
    });
  }
}
