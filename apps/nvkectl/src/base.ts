import { BaseCommand, globalFlags } from "@nodekit/cli-kit";
import { currentSite, type Site } from "@nodekit/site-config";
import { type Command, Flags } from "@oclif/core";

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
}
