import type { View } from "@nodekit/cli-kit";
import { NvkectlCommand } from "./base.ts";
import { fileFlag, objectOutputFlag } from "./flags.ts";
import { createRelease, type ReleaseKind, type ReleaseObjects } from "./services/releases.ts";

/** What tells one release kind's `create` command from the others. */
export interface CreateReleaseSpec<K extends ReleaseKind> {
  kind: K;
  /** The kind as the API names it: MachineImage, ClusterRelease, NodePoolRelease. */
  label: string;
  view: (now?: () => Date) => View<ReleaseObjects[K]>;
  /** What an object of the kind is, in a sentence; the rest of the description is the same for every kind. */
  about: string;
}

/**
 * `create machineimage`, `create clusterrelease` and `create nodepoolrelease`: one command
 * that checks a request file and publishes it, its flags, output and errors the same for each
 * release kind.
 */
export function createReleaseCommand<K extends ReleaseKind>(spec: CreateReleaseSpec<K>) {
  const { kind, label, view } = spec;
  const request = `Create${label}Request`;
  return class CreateRelease extends NvkectlCommand<typeof CreateRelease> {
    static override aliases = [`create:${kind}s`];
    static override summary = `Publish a ${label} from a ${request} file.`;
    static override description =
      `${spec.about} A site publishes a MachineImage, a ClusterRelease and a NodePoolRelease before its first tenant cluster; examples/ holds one of each.

The file holds one ${request}, as YAML or JSON; the schema is served at /api/docs on the management plane. It is checked before anything is sent: every problem is listed with its field path, and the command exits 3 without creating anything. A name that exists already exits 5 with the controller's message.`;

    static override examples = [`<%= config.bin %> <%= command.id %> -f examples/${kind}.yaml`];

    static override flags = {
      file: fileFlag(request),
      output: objectOutputFlag,
    };

    override async run(): Promise<void> {
      const created = await createRelease({ client: await this.controller(), kind, file: this.flags.file });
      if (this.flags.output) await this.printOne(this.flags.output, view(), created);
      else await this.out(`${kind} "${created.name}" created: ID ${created.id}, version ${created.version}`);
    }
  };
}
