import { Flags, formatTable } from "@nodekit/cli-kit";
import { NrCommand } from "../../base.ts";
import { registrationStatus } from "../../services/status.ts";

export default class ClusterStatus extends NrCommand<typeof ClusterStatus> {
  static override summary =
    "Show where this machine's registration stands: each phase, the agent, the pins, the last error, the next step.";

  static override description =
    `Reads ~/.nr/state.json (written by nr cluster register) and shows each phase in order with its state (done, skipped, failed, stale, running, pending) and when it ran, the agent, the pins used, the last error and the command to run next. It works before any registration (it says so) and on the state of an interrupted run. It changes nothing and talks to no service.

Until the operator phase has run, VMs cannot be sold from this machine; status says so.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    { description: "As JSON, for scripts:", command: "<%= config.bin %> <%= command.id %> -o json | jq -r .status" },
  ];

  static override flags = {
    output: Flags.option({
      char: "o",
      description: "Output format.",
      options: ["table", "json", "yaml"] as const,
      default: "table" as const,
    })(),
  };

  override async run(): Promise<void> {
    const status = await registrationStatus(process.env);
    if (this.flags.output !== "table") {
      const { renderOutput } = await import("@nodekit/cli-kit");
      await this.out(await renderOutput(this.flags.output, { rows: [], columns: [], data: status }));
      return;
    }
    const lines: string[] = [];
    if (status.status === "none") {
      lines.push(`No registration on this machine yet (no ${status.stateFile}).`);
    } else {
      const agent = status.agent;
      lines.push(`Status:   ${status.status}${status.runningPid ? ` (pid ${status.runningPid})` : ""}`);
      lines.push(
        `Agent:    ${agent?.name ?? "<none>"}${agent?.id ? ` (${agent.id})` : agent?.agentId ? ` (${agent.agentId})` : ""}`,
      );
      if (status.api) lines.push(`API:      ${status.api}`);
      if (status.pins) {
        const versions = Object.entries(status.pins.versions)
          .map(([tool, version]) => `${tool} ${version}`)
          .join(", ");
        lines.push(
          `Pins:     ${status.pins.name} (${status.pins.origin}, ${status.pins.hash.slice(0, 19)}…): ${versions}`,
        );
      }
      lines.push(`State:    ${status.stateFile} (updated ${status.updatedAt ?? "?"})`);
    }
    lines.push("");
    lines.push(
      formatTable(
        ["#", "PHASE", "STATE", "FINISHED", "DETAIL"],
        status.phases.map((phase, index) => [
          String(index + 1),
          phase.id,
          phase.state.toUpperCase(),
          phase.finishedAt ?? "",
          phase.detail ?? "",
        ]),
      ).trimEnd(),
    );
    lines.push("");
    if (status.lastError) {
      lines.push(`Last error: ${status.lastError.message} [${status.lastError.code}] at ${status.lastError.at}`);
    }
    if (status.status !== "none" && !status.operatorInstalled) {
      lines.push("Operator: not installed: VMs cannot be sold from this machine until the operator phase runs.");
    }
    lines.push(
      status.nextStep
        ? `Next:     ${status.nextStep}`
        : status.status === "running"
          ? "Next:     wait for the run in progress"
          : "Next:     nothing: the registration is complete.",
    );
    await this.out(lines.join("\n"));
  }
}
