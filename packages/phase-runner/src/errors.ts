import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** The permanent error codes of `@nodekit/phase-runner` (listed in docs/errors.md). */
export const errorCodes = defineErrorCodes("phase-runner", {
  PHASE_UNKNOWN: {
    exitCode: ExitCode.Usage,
    meaning:
      "A phase named to skip, start from or run alone is not one of the run's phases; the known ones are listed.",
  },
  PHASE_SELECTION_CONFLICT: {
    exitCode: ExitCode.Usage,
    meaning: "The phases chosen contradict each other (start from one and run only another, or skip the one to run).",
  },
  PHASE_PREREQUISITE_MISSING: {
    exitCode: ExitCode.Conflict,
    meaning:
      "Starting from (or running only) a phase needs every phase before it done or skipped in the state; some are not.",
  },
  PHASE_OUTPUT_MISSING: {
    exitCode: ExitCode.Conflict,
    meaning:
      "A phase needs a result of an earlier phase that the state does not have (that phase was skipped or never ran).",
  },
  RUN_STATE_EXISTS: {
    exitCode: ExitCode.Conflict,
    meaning: "An earlier run left its state; resume it or restart from the first phase. Nothing was changed.",
  },
  RUN_STATE_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The state file does not parse or was edited by hand; every problem is listed and nothing was changed.",
  },
  RUN_STATE_UNREADABLE: {
    exitCode: ExitCode.Precondition,
    meaning: "The state file exists but cannot be read (permissions, not a file).",
  },
  RUN_STATE_UNSAFE: {
    exitCode: ExitCode.Precondition,
    meaning:
      "The state file is a link, another user's file, or readable or writable by others: another user could have written which phases count as done. It was not read.",
  },
  RUN_STATE_WRITE_FAILED: {
    exitCode: ExitCode.Precondition,
    meaning: "A checkpoint could not be written (permissions, disk full); the phase's work is done but not recorded.",
  },
  RUN_LOCKED: {
    exitCode: ExitCode.Conflict,
    meaning: "Another run on this machine holds the lock; two runs never interleave.",
  },
  RUN_LOCK_STALE: {
    exitCode: ExitCode.Conflict,
    meaning:
      "A run that is no longer running (killed or crashed) left its lock; it is reported, never taken over silently.",
  },
  RUN_LOCK_COMPROMISED: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The run lost its lock while running (the lock was removed or taken); it stopped before the next checkpoint.",
  },
  RUN_INTERRUPTED: {
    exitCode: ExitCode.Interrupted,
    meaning:
      "The run was interrupted (SIGINT) between two steps, or the step it stopped; completed phases are recorded and a resumed run continues.",
  },
  RUN_TERMINATED: {
    exitCode: ExitCode.Terminated,
    meaning:
      "The run was asked to stop (SIGTERM) between two steps, or the step it stopped; completed phases are recorded and a resumed run continues.",
  },
});
