import { BaseCommand, type Hints } from "@nodekit/cli-kit";
import type { Command } from "@oclif/core/command";
import { NR_HINTS } from "./hints.ts";

/** nr's commands: the kit's global flags, logger, printer and error rendering, with nr's hints. */
export abstract class NrCommand<T extends typeof Command> extends BaseCommand<T> {
  protected override hints(): Hints {
    return NR_HINTS;
  }

  /**
   * A run's stop on SIGINT and SIGTERM (register, reset, upgrade). `on`, not `once`:
   * proper-lockfile's signal-exit re-raises a signal that no other listener is left to handle,
   * which killed nr at the first Ctrl-C once it held the lock (a partial download left
   * behind). The first SIGINT or SIGTERM aborts `signal`: the running step finishes (or ends
   * with it: a wait, a download) and the run stops there, recorded as RUN_INTERRUPTED or
   * RUN_TERMINATED with its phase, the lock released: exit 130 or 143. A second one stops at
   * once, as without this handler. `release()` removes the handlers.
   */
  protected stopOnSignals(): { signal: AbortSignal; release: () => void } {
    const controller = new AbortController();
    const release = () => {
      process.removeListener("SIGINT", stop);
      process.removeListener("SIGTERM", stop);
    };
    const stop = (signal: NodeJS.Signals) => {
      if (!controller.signal.aborted) {
        controller.abort(signal);
        return;
      }
      release();
      process.kill(process.pid, signal);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    return { signal: controller.signal, release };
  }
}
