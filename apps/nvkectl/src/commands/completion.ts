import { Args } from "@nodekit/cli-kit";
import { NvkectlCommand } from "../base.ts";
import { completionScript } from "../services/completion.ts";

export default class Completion extends NvkectlCommand<typeof Completion> {
  static override summary = "Print the shell completion script for bash or zsh.";
  static override description =
    "The script completes commands, flags, flag values (-o json, yaml, …) and, as kubectl does, the names the site holds: clusters (get clusters, describe, patch and delete cluster, get kubeconfig, --cluster), node pools (with --cluster) and sites (--site, config use-site and delete-site). It asks nvkectl for them at each TAB, with the active site (or --site); a site that does not answer offers no names.";

  static override examples = [
    { description: "In this shell (bash):", command: "source <(<%= config.bin %> <%= command.id %> bash)" },
    {
      description: "For every zsh, into a directory on $fpath:",
      command: "<%= config.bin %> <%= command.id %> zsh > ~/.zfunc/_nvkectl",
    },
  ];

  static override args = {
    shell: Args.string({ description: "The shell.", options: ["bash", "zsh"], required: true }),
  };

  override async run(): Promise<void> {
    await this.out(completionScript(this.args.shell as "bash" | "zsh", this.config.bin), { raw: true });
  }
}
