import { dryRunFlag, Flags, formatTable } from "@nodekit/cli-kit";
import { isUserError, UserError } from "@nodekit/errors";
import { describePhases, phaseRunnerErrorCodes } from "@nodekit/phase-runner";
import { PhaseCommand, waits } from "../../phase-command.ts";
import { type UpgradeSummary, upgrade } from "../../services/upgrade.ts";
import { UPGRADE_PHASES } from "../../upgrade/phases.ts";

export default class ClusterUpgrade extends PhaseCommand<typeof ClusterUpgrade> {
  static override summary =
    "Move this machine's k3s, Calico, Liqo and operator to the platform's new pins, in place; untouched what did not change.";

  static override description =
    `Asks the NodeRings API for the pinned versions (--offline: the local ones), compares them with what the registration installed (~/.nr/state.json), and upgrades each component whose pin moved, in place and in this order:

${describePhases(UPGRADE_PHASES)
  .split("\n")
  .map((line) => `  ${line}`)
  .join("\n")}

A component whose pin did not change is not touched: a new k3s re-runs neither Calico nor Liqo nor the peerings. Skew rules refuse, before anything is done: any downgrade; k3s more than one minor version at a time; a liqoctl that is not Liqo's version; a Liqo minor change while peered with a NodeRings that runs another minor.

--plan says, per component, from which version to which, what restarts, and what is left untouched (-o json for scripts). --dry-run prints every call. The run is checkpointed in ~/.nr/upgrade-state.json and continued where it stopped when run again; each component is recorded in the registration's state as soon as it is upgraded, so nr cluster status shows it and nr cluster register --resume keeps it. It holds the machine's lock.`;

  static override examples = [
    { description: "What would change:", command: "<%= config.bin %> <%= command.id %> --plan" },
    { description: "Every call, in order:", command: "<%= config.bin %> <%= command.id %> --dry-run" },
    "<%= config.bin %> <%= command.id %>",
  ];

  static override flags = {
    plan: Flags.boolean({
      description: "Show what would change (per component: from, to, what restarts), and change nothing.",
      exclusive: ["dry-run"],
    }),
    "dry-run": dryRunFlag,
    output: Flags.option({
      char: "o",
      description: "With --plan or --dry-run: print json or yaml instead of a table or shell lines.",
      options: ["table", "json", "yaml"] as const,
      default: "table" as const,
    })(),
    offline: Flags.boolean({
      description:
        "Do not ask the API for the pins: the local ones (~/.nr/config.yaml, else the shipped). Not platform-validated.",
    }),
    "api-url": Flags.string({
      description: "The NodeRings API URL (default: the registration's, then NR_API_URL and ~/.nr/config.yaml).",
    }),
    "api-server-url": Flags.string({
      description:
        "As given to nr cluster register, when it was given: where NodeRings reaches this cluster's API server.",
    }),
    "calico-manifests": Flags.string({
      description: "As given to nr cluster register: where the tigera operator manifests are (a mirror).",
    }),
    "operator-chart": Flags.string({
      description: "As given to nr cluster register: the operator chart (a local path or a mirror's reference).",
    }),
    "break-lock": Flags.boolean({
      description: "Clear a lock left by a run that is no longer running (never one a live run holds), then go on.",
    }),
    timeout: Flags.string({ description: "How long each wait (node, Calico, Liqo, helm) may take.", default: "10m" }),
    "poll-interval": Flags.string({ hidden: true, default: "2s" }),
    "api-timeout": Flags.string({ hidden: true, default: "30s" }),
    "host-root": Flags.string({ hidden: true, description: "Read the host facts from this directory instead of /." }),
  };

  override async run(): Promise<void> {
    const flags = this.flags;
    const mode = flags.plan ? "plan" : flags["dry-run"] ? "dry-run" : "run";
    if (flags["break-lock"]) await this.breakLock();
    await this.withRun(mode === "run", withUpgradeAdvice, async (parts, done) => {
      const outcome = await upgrade({
        apiUrl: flags["api-url"],
        apiServerUrl: flags["api-server-url"],
        offline: flags.offline,
        calicoManifests: flags["calico-manifests"],
        operatorChart: flags["operator-chart"],
        mode,
        ...waits(flags),
        ...parts,
      });
      done();
      if (outcome.kind === "plan") {
        await this.printSummary(outcome.summary, flags.output);
        return;
      }
      if (outcome.kind === "dry-run") {
        await this.printPlan(outcome.planned.plan, flags.output);
        return;
      }
      const moved = outcome.summary.components.filter((entry) => entry.change === "upgrade");
      await this.out(
        moved.length === 0
          ? `nothing to upgrade: every component is at pin set ${outcome.summary.pins.name}`
          : `upgraded to pin set ${outcome.summary.pins.name}: ${moved.map((entry) => `${entry.component} ${entry.from} → ${entry.to}`).join(", ")}; untouched: ${outcome.summary.untouched.join(", ") || "none"}`,
      );
    });
  }

  private async printSummary(summary: UpgradeSummary, format: "table" | "json" | "yaml"): Promise<void> {
    if (format !== "table") {
      const { renderOutput } = await import("@nodekit/cli-kit");
      await this.out(await renderOutput(format, { rows: [], columns: [], data: summary }));
      return;
    }
    const table = formatTable(
      ["COMPONENT", "FROM", "TO", "CHANGE", "RESTARTS"],
      summary.components.map((entry) => [
        entry.component === "liqo" ? "liqo (liqoctl)" : entry.component,
        entry.from ?? "-",
        entry.to,
        entry.change,
        entry.restarts,
      ]),
    );
    const moving = summary.components.some((entry) => entry.change === "upgrade");
    await this.out(
      [
        `Pins:      ${summary.pins.name} (${summary.pins.origin}, ${summary.pins.hash.slice(0, 19)}…)`,
        "",
        table.trimEnd(),
        "",
        `Untouched: ${summary.untouched.join(", ") || "none"}`,
        moving ? "Next:      nr cluster upgrade" : "Next:      nothing: every component is at these pins.",
      ].join("\n"),
    );
  }
}

/** A component's failure says which, what is recorded, and how to continue; an upgrade refused before it ran, not. */
function withUpgradeAdvice(error: unknown): unknown {
  if (!isUserError(error) || typeof error.facts.phase !== "string") return error;
  if (error.code === phaseRunnerErrorCodes.PHASE_UNKNOWN.code) return error;
  return new UserError(error.errorCode, error.message, {
    why: error.why,
    problems: error.problems,
    next: [
      ...error.next,
      `the components before ${error.facts.phase} are upgraded and recorded in ~/.nr/state.json; continue with: nr cluster upgrade (it continues there)`,
    ],
    facts: error.facts,
    cause: error,
  });
}
