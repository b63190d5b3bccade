import { Args, listFlags, outputFlag, type View } from "@nodekit/cli-kit";
import { NvkectlCommand } from "./base.ts";
import { selectorFlag } from "./flags.ts";
import { listReleases, type ReleaseKind, type ReleaseObjects, releasesNotFound } from "./services/releases.ts";
import { checkNamesOrSelector, selectorOf } from "./services/select.ts";

/** What tells one release kind's `get` command from the others. */
export interface GetReleasesSpec<K extends ReleaseKind> {
  kind: K;
  /** The kind as the API names it: MachineImage, ClusterRelease, NodePoolRelease. */
  label: string;
  view: (now?: () => Date) => View<ReleaseObjects[K]>;
  summary: string;
  /** What an object of the kind is, in a sentence; the rest of the description is the same for every kind. */
  about: string;
}

/**
 * `get machineimages`, `get clusterreleases` and `get nodepoolreleases`: one read-only
 * command, its flags, output and not-found error the same for each release kind.
 */
export function getReleasesCommand<K extends ReleaseKind>(spec: GetReleasesSpec<K>) {
  const { kind, label, view } = spec;
  return class GetReleases extends NvkectlCommand<typeof GetReleases> {
    static override aliases = [`get:${kind}`];
    static override summary = spec.summary;
    static override description =
      `${spec.about} With NAME, only that one is shown (still as a list with -o json and -o yaml); several names show several, and a name that does not exist is named in one error after the others are shown (exit 4). -o name, -o jsonpath=TEMPLATE, --selector, --sort-by, --no-headers and --show-labels work as for get clusters.`;

    static override examples = ["<%= config.bin %> <%= command.id %>", "<%= config.bin %> <%= command.id %> -o wide"];

    static override args = {
      name: Args.string({
        description: `Show only the ${label} with this name; several show several.`,
        multiple: true,
      }),
    };

    static override flags = {
      output: outputFlag(),
      selector: selectorFlag,
      ...listFlags,
    };

    override async run(): Promise<void> {
      const names = this.args.name ?? [];
      checkNamesOrSelector(names, this.flags.selector, label);
      const selector = selectorOf(this.flags.selector);
      const client = await this.controller();
      let missing: string[] = [];
      await this.printList(this.flags.output, view(), async (add) => {
        ({ missing } = await listReleases({ client, kind, names, selector, onPage: add }));
      });
      if (missing.length > 0) throw releasesNotFound(kind, missing);
    }
  };
}
