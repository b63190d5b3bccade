import { UserError } from "@nodekit/errors";
import {
  type OutputsOf,
  type PhaseOutputs,
  type PriorOutputs,
  phaseRunnerErrorCodes,
  type RunState,
} from "@nodekit/phase-runner";
import type { JsonValue } from "@nodekit/plan";

/**
 * What the registration's phases recorded (a done or stale checkpoint: its work is in place),
 * as the register phases read their earlier phases' outputs: the upgrade runs their plans on
 * what the registration did, not on its own phases'.
 */
export function registeredOutputs(state: RunState): PriorOutputs {
  const outputsOf = (id: string): PhaseOutputs | undefined => {
    const checkpoint = state.phases[id];
    return checkpoint?.state === "done" || checkpoint?.state === "stale" ? checkpoint.outputs : undefined;
  };
  const idOf = (phase: OutputsOf<unknown> | string) => (typeof phase === "string" ? phase : phase.id);
  const require = (phase: OutputsOf<unknown> | string, key: string): JsonValue => {
    const id = idOf(phase);
    const value = outputsOf(id)?.[key];
    if (value !== undefined) return value;
    throw new UserError(
      phaseRunnerErrorCodes.PHASE_OUTPUT_MISSING,
      `the registration's phase ${id} has no recorded ${key}, which the upgrade needs`,
      {
        why: `the registration's state does not record phase ${id} as done`,
        next: "finish the registration first: nr cluster register --resume",
        facts: { phase: id, output: key },
      },
    );
  };
  const prior = {
    of: (phase: OutputsOf<unknown> | string) => outputsOf(idOf(phase)),
    recorded: (phase: OutputsOf<unknown>) => outputsOf(phase.id),
    require,
    known: require,
  };
  return prior as PriorOutputs;
}
