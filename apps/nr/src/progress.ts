import type { ProgressRenderer } from "@nodekit/cli-kit";
import type { PhaseEvent } from "@nodekit/phase-runner";

const REASONS: Record<string, string> = {
  "failed-before": "again: it failed last time",
  "inputs-changed": "again: its inputs changed",
  "probe-failed": "again: its work is no longer in place",
  "after-earlier-rerun": "again: an earlier phase ran again",
};

/**
 * Feeds a registration's events to the progress renderer: one entry per phase, keyed by
 * its id (a live list on a TTY, `[k3s] …` lines otherwise, NDJSON with --json-logs).
 */
export function phaseProgress(renderer: ProgressRenderer): (event: PhaseEvent) => void {
  return (event) => {
    switch (event.type) {
      case "phase-started": {
        const again = REASONS[event.reason];
        renderer.update({
          key: event.phase.id,
          title: again
            ? `${event.phase.title} (${again}${event.detail ? `: ${event.detail}` : ""})`
            : event.phase.title,
          state: "running",
        });
        break;
      }
      case "step-started":
        renderer.update({ key: event.phase.id, title: event.phase.title, state: "running", detail: event.line });
        break;
      case "phase-progress":
        renderer.update({ key: event.phase.id, title: event.phase.title, state: "running", detail: event.detail });
        break;
      case "phase-finished":
        renderer.update({ key: event.phase.id, title: event.phase.title, state: "done", ms: event.ms });
        break;
      case "phase-kept":
        renderer.update({
          key: event.phase.id,
          title: event.phase.title,
          state: "skipped",
          detail: `done${event.finishedAt ? ` at ${event.finishedAt}` : ""}, still in place: kept`,
        });
        break;
      case "phase-skipped":
        renderer.update({ key: event.phase.id, title: event.phase.title, state: "skipped", detail: event.reason });
        break;
      case "phase-failed":
        renderer.update({ key: event.phase.id, title: event.phase.title, state: "failed", detail: event.message });
        break;
      default:
        break;
    }
  };
}
