import type { UserError } from "@nodekit/errors";
import type { fsSafeErrorCodes } from "@nodekit/fs-safe";
import type { nodeRingsErrorCodes } from "@nodekit/noderings-api";
import type { phaseRunnerErrorCodes } from "@nodekit/phase-runner";
import type { versionPinsErrorCodes } from "@nodekit/version-pins";
import type { errorCodes } from "./errors.ts";

/**
 * A code of the error tables nr's failures come from: a hint under a code no table has (a
 * renamed or removed one) fails the typecheck. Types only: the tables are not loaded for it.
 */
type NrErrorCode =
  | keyof typeof errorCodes
  | keyof typeof phaseRunnerErrorCodes
  | keyof typeof fsSafeErrorCodes
  | keyof typeof nodeRingsErrorCodes
  | keyof typeof versionPinsErrorCodes;

/** nr's hint table: its own next steps, by the code they follow. */
export type NrHints = Partial<Record<NrErrorCode, (error: UserError) => readonly string[]>>;

/** nr's own next steps, per error code, after the library's (which never name nr). */
export const NR_HINTS = {
  RUN_STATE_EXISTS: () => ["see where it stopped with nr cluster status"],
  RUN_LOCK_STALE: () => [
    "or let nr clear it and continue: nr cluster register --resume --break-lock (only when no other nr runs on this machine)",
  ],
  RUN_LOCKED: () => ["see its progress with nr cluster status"],
  RUN_STATE_INVALID: () => ["see what nr reads from it with nr cluster status"],
  DIR_UNSAFE: () => ["or point NR_HOME at a directory of your own that only you can write to (the default is ~/.nr)"],
  NODERINGS_NO_TOKEN: () => ["set NR_API_TOKEN, or token in ~/.nr/config.yaml (mode 0600)"],
  NODERINGS_UNAUTHORIZED: () => ["check the token in NR_API_TOKEN or ~/.nr/config.yaml"],
  PINS_DIGEST_MISSING: () => ["or run with pins that carry the digest (--offline reads pins from ~/.nr/config.yaml)"],
  PRECHECKS_FAILED: () => ["nr cluster register --skip-prechecks skips them (recorded in the state)"],
  VERIFY_FAILED: () => ["then: nr cluster register --resume --only-phase verify"],
} satisfies NrHints;
