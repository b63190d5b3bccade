import { Flags } from "@nodekit/cli-kit";
import { NrCommand } from "../../base.ts";
import { supportBundle } from "../../services/support-bundle.ts";

export default class ClusterSupportBundle extends NrCommand<typeof ClusterSupportBundle> {
  static override summary = "Write one archive with what support needs to see this machine: never a secret.";

  static override description =
    `Writes nr-support-<time>.tar.gz (mode 0600) in the current directory, or --output FILE, with:

  state.json          the registration's state (and reset-state.json while a reset is under way)
  last-run.log        the last register or reset run's log
  host.json           the host facts the prechecks read
  k3s-check-config.txt, k3s-journal.txt   k3s check-config, the tail of k3s's journal
  nodes.json, tigerastatus.json           the nodes and Calico's status
  liqoctl-info.json   liqoctl info -o json
  helm-status.json    the operator release's helm status (its info only: never values or manifest)
  pins.json           the pins the registration used
  index.json          what each file is, the command that made it and its exit code

Every file goes through the redactor, which first learns every secret nr knows of (the NodeRings API token, the Proxmox credentials in this cluster's Secret and in NR_PROXMOX_TOKEN_SECRET), then a pass that blanks any credential-looking field. A command that fails or is missing leaves its file empty, and index.json says why. It changes nothing and talks to no service.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    { description: "Somewhere else:", command: "<%= config.bin %> <%= command.id %> --output /tmp/pve-node-1.tar.gz" },
  ];

  static override flags = {
    output: Flags.string({ description: "Write the archive here (never over an existing file)." }),
    "journal-lines": Flags.integer({ description: "How many lines of k3s's journal.", default: 500, min: 1 }),
    "host-root": Flags.string({ hidden: true, description: "Read the host facts from this directory instead of /." }),
  };

  override async run(): Promise<void> {
    const bundle = await supportBundle({
      output: this.flags.output,
      env: process.env,
      runner: this.processRunner(),
      redactor: this.redactor,
      hostRoot: this.flags["host-root"],
      journalLines: this.flags["journal-lines"],
    });
    const notes = bundle.entries.filter((entry) => entry.note !== undefined);
    for (const entry of notes) this.logger.warn(`${entry.file}: ${entry.note}`);
    await this.out(`wrote ${bundle.path} (${bundle.entries.length} files)`);
  }
}
