import { appendFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PhaseEvent } from "@nodekit/phase-runner";
import type { Redactor } from "@nodekit/process";
import type { NrPaths } from "./home.ts";

/** The last run's log in `run/` (0600): one redacted JSON line per event, what `nr cluster support-bundle` takes. */
export const LAST_RUN_LOG = "last-run.log";

/**
 * Keeps the log of a run (register, reset): every phase event as one JSON line, through the
 * redactor (never a secret), in `~/.nr/run/last-run.log` (0600). It begins afresh at the
 * run's start, once the run holds the machine's lock (a run refused by the lock leaves the
 * running one's log alone). Returns the event handler to chain with the progress renderer's.
 * A line that cannot be written is dropped: the log never fails a run.
 */
export function runLog(
  paths: NrPaths,
  redactor: Redactor,
  clock: () => Date = () => new Date(),
): (event: PhaseEvent) => void {
  const file = join(paths.run, LAST_RUN_LOG);
  let open = false;
  return (event) => {
    const line = `${redactor.redact(JSON.stringify({ at: clock().toISOString(), ...event }))}\n`;
    try {
      if (event.type === "run-started") {
        // run/ is the user's own 0700 directory (checked before the run); never through a link put here.
        rmSync(file, { force: true });
        writeFileSync(file, line, { mode: 0o600, flag: "wx" });
        open = true;
      } else if (open) appendFileSync(file, line);
    } catch {
      open = false;
    }
  };
}
