import { dryRunFlag, Flags, parseDuration } from "@nodekit/cli-kit";
import { isUserError, UserError } from "@nodekit/errors";
import { describePhases } from "@nodekit/phase-runner";
import { PhaseCommand } from "../../phase-command.ts";
import { RESET_PHASES, UNREACHABLE } from "../../reset/phases.ts";
import { displayPath } from "../../services/home.ts";
import { reset } from "../../services/reset.ts";

export default class ClusterReset extends PhaseCommand<typeof ClusterReset> {
  static override summary =
    "Undo this machine's registration: unoffload, unpeer, uninstall Liqo, the operator, Calico and k3s, deregister the agent.";

  static override description =
    `Runs the registration's phases in reverse, each checkpointed in ~/.nr/reset-state.json once it succeeded:

${describePhases(RESET_PHASES)
  .split("\n")
  .map((line) => `  ${line}`)
  .join("\n")}

It removes only what the registration recorded that nr created (~/.nr/state.json): a phase the registration never completed is skipped, an agent that existed before it registered is kept in NodeRings. A reset that fails or is interrupted continues where it stopped when run again. --dry-run prints every call it would make, in order, and changes nothing. It never runs while a registration runs.

NodeRings issues one-time credentials for the two liqoctl unpeer calls, as it did for peering. When it cannot be reached, --force removes this machine's side only: the virtual node, the tenant namespace and the ForeignCluster; NodeRings keeps the agent and its peering until they are removed there.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    { description: "See every call first:", command: "<%= config.bin %> <%= command.id %> --dry-run" },
    { description: "NodeRings is gone for good:", command: "<%= config.bin %> <%= command.id %> --force" },
  ];

  static override flags = {
    force: Flags.boolean({
      description:
        "Go on when NodeRings cannot be reached: remove this machine's side of the peering only, and leave the agent in NodeRings.",
    }),
    "api-url": Flags.string({
      description:
        "The NodeRings API URL (default: the one the registration used, then NR_API_URL and ~/.nr/config.yaml).",
    }),
    "calico-manifests": Flags.string({
      description:
        "Where the tigera operator manifests are (default: where the registration, or the last upgrade, took them from).",
    }),
    "dry-run": dryRunFlag,
    output: Flags.option({
      char: "o",
      description: "With --dry-run: print the plan as json or yaml instead of shell lines.",
      options: ["table", "json", "yaml"] as const,
      default: "table" as const,
    })(),
    timeout: Flags.string({ description: "How long each wait (helm, kubectl delete) may take.", default: "10m" }),
    "api-timeout": Flags.string({ hidden: true, default: "30s" }),
  };

  override async run(): Promise<void> {
    const flags = this.flags;
    const env = process.env;
    const dryRun = flags["dry-run"];
    await this.withRun(!dryRun, withResetAdvice, async (parts, done) => {
      const outcome = await reset({
        apiUrl: flags["api-url"],
        force: flags.force,
        calicoManifests: flags["calico-manifests"],
        dryRun,
        waitSeconds: Math.ceil(parseDuration(flags.timeout, "--timeout") / 1000),
        apiTimeoutMs: parseDuration(flags["api-timeout"], "--api-timeout"),
        ...parts,
      });
      done();
      if (outcome.kind === "plan") {
        await this.printPlan(outcome.planned.plan, flags.output);
        return;
      }
      const { result } = outcome;
      await this.out(
        `reset: ${result.ran.length} phases ran, ${result.kept.length} kept, ${result.skipped.length} skipped; the registration's state is in ${displayPath(outcome.archive, env)}`,
      );
      for (const left of outcome.left) this.logger.warn(`--force: ${left} is left; remove it there`);
    });
  }
}

/** A phase's failure says which phase, and how to continue. */
function withResetAdvice(error: unknown): unknown {
  if (!isUserError(error) || typeof error.facts.phase !== "string") return error;
  return new UserError(error.errorCode, error.message, {
    why: error.why,
    problems: error.problems,
    next: [
      ...error.next,
      ...(UNREACHABLE.includes(error.code)
        ? [
            "when NodeRings stays unreachable, nr cluster reset --force removes this machine's side only (NodeRings keeps the agent and its peering until they are removed there)",
          ]
        : []),
      `the reset phases before ${error.facts.phase} are done and recorded in ~/.nr/reset-state.json; after fixing it, run nr cluster reset again: it continues there`,
    ],
    facts: error.facts,
    cause: error,
  });
}
