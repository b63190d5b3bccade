import { Flags, formatTable } from "@nodekit/cli-kit";
import { UserError } from "@nodekit/errors";
import { NrCommand } from "../../base.ts";
import { errorCodes } from "../../errors.ts";
import { registrationStatus } from "../../services/status.ts";

export default class ClusterStatus extends NrCommand<typeof ClusterStatus> {
  static override summary =
    "Show where this machine's registration stands: each phase, the agent, the pins, the last error, the next step.";

  static override description =
    `Reads ~/.nr/state.json (written by nr cluster register) and shows each phase in order with its state (done, skipped, failed, stale, running, pending) and when it ran, the agent, the pins used, the last error and the command to run next. An nr cluster upgrade that failed or was interrupted (~/.nr/upgrade-state.json) is shown too: the component it stopped at, its error, and the command that continues it. It works before any registration (it says so) and on the state of an interrupted run. It changes nothing and talks to no service.

Until the operator phase has run, VMs cannot be sold from this machine; status says so.

--live also checks the running machine now, read-only: for each phase the registration completed, the checks its probe and the verify phase make (the k3s API and node, Calico, the node Ready, Liqo, the ForeignCluster both ways, the operator release and its Secret), and NodeRings' view of the peering and offloading by GET requests only: nothing is posted to NodeRings, nothing changes. A failed check exits ${errorCodes.LIVE_CHECK_FAILED.exitCode}.`;

  static override examples = [
    "<%= config.bin %> <%= command.id %>",
    { description: "As JSON, for scripts:", command: "<%= config.bin %> <%= command.id %> -o json | jq -r .status" },
    { description: "Check the running machine now:", command: "<%= config.bin %> <%= command.id %> --live" },
  ];

  static override flags = {
    live: Flags.boolean({
      description: "Also check the running machine now (read-only; NodeRings is only asked, by GET).",
    }),
    output: Flags.option({
      char: "o",
      description: "Output format.",
      options: ["table", "json", "yaml"] as const,
      default: "table" as const,
    })(),
  };

  override async run(): Promise<void> {
    const status = await registrationStatus(
      process.env,
      this.flags.live
        ? { runner: this.processRunner(), redactor: this.redactor, version: this.config.version }
        : undefined,
    );
    if (this.flags.output !== "table") {
      const { renderOutput } = await import("@nodekit/cli-kit");
      await this.out(await renderOutput(this.flags.output, { rows: [], columns: [], data: status }));
      this.failOnLive(status.live);
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
    const upgrade = status.upgrade;
    if (upgrade !== undefined) {
      const pins =
        upgrade.from === undefined || upgrade.to === undefined ? "" : ` (pins ${upgrade.from} → ${upgrade.to})`;
      lines.push(
        `Upgrade:  ${upgrade.status}${upgrade.component === undefined ? "" : ` at ${upgrade.component}`}${pins}; its state: ${upgrade.stateFile}`,
      );
      if (upgrade.lastError) {
        lines.push(`          ${upgrade.lastError.message} [${upgrade.lastError.code}] at ${upgrade.lastError.at}`);
      }
    }
    lines.push(
      status.nextStep
        ? `Next:     ${status.nextStep}`
        : status.status === "running" || upgrade?.status === "running"
          ? "Next:     wait for the run in progress"
          : "Next:     nothing: the registration is complete.",
    );
    if (status.live !== undefined) {
      lines.push("");
      lines.push(`Live:     ${status.live.result} at ${status.live.checkedAt}`);
      lines.push(
        formatTable(
          ["CHECK", "RESULT", "DETAIL"],
          status.live.checks.map((entry) => [entry.id, entry.result.toUpperCase(), entry.message ?? ""]),
        ).trimEnd(),
      );
    }
    await this.out(lines.join("\n"));
    this.failOnLive(status.live);
  }

  /** A failed live check is the command's failure: scripts branch on the exit code. */
  private failOnLive(
    live: { result: string; checks: readonly { id: string; result: string; message?: string }[] } | undefined,
  ): void {
    if (live?.result !== "fail") return;
    const failed = live.checks.filter((entry) => entry.result === "fail");
    throw new UserError(
      errorCodes.LIVE_CHECK_FAILED,
      `${failed.length} of ${live.checks.length} live checks failed: ${failed.map((entry) => entry.id).join(", ")}`,
      { next: "fix what the checks say; nr cluster register --resume redoes a phase whose work is gone" },
    );
  }
}
