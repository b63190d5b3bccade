import { UserError } from "@nodekit/errors";
import { errorCodes } from "./errors.ts";

/** Which phases a run takes: all, minus `skip`; or from `from` on; or `only` one. */
export interface PhaseSelection {
  skip?: readonly string[] | undefined;
  from?: string | undefined;
  only?: string | undefined;
}

/** How the caller's options are named in messages (a CLI passes its flags: `--skip-phases`). */
export interface SelectionLabels {
  skip: string;
  from: string;
  only: string;
}

const DEFAULT_LABELS: SelectionLabels = {
  skip: "the phases to skip",
  from: "the phase to start from",
  only: "the phase to run",
};

/** Why each phase is not run by selection, by id; a phase not in the map is selected. */
export type Selected = ReadonlyMap<string, string>;

/**
 * Checks a selection against the phase list and says, per phase, why it is left out (if
 * it is). An unknown id is PHASE_UNKNOWN naming the known ones in order; `from` with
 * `only`, or a skipped `from`/`only`, is PHASE_SELECTION_CONFLICT.
 */
export function selectPhases(
  phases: readonly { readonly id: string }[],
  selection: PhaseSelection,
  labels: SelectionLabels = DEFAULT_LABELS,
): Selected {
  const ids = phases.map((entry) => entry.id);
  const unknown = (id: string, label: string) =>
    new UserError(errorCodes.PHASE_UNKNOWN, `there is no phase ${JSON.stringify(id)} (${label})`, {
      why: `the phases are, in order: ${ids.join(", ")}`,
      facts: { phase: id },
    });
  const skip = [...new Set(selection.skip ?? [])];
  for (const id of skip) if (!ids.includes(id)) throw unknown(id, labels.skip);
  if (selection.from !== undefined && !ids.includes(selection.from)) throw unknown(selection.from, labels.from);
  if (selection.only !== undefined && !ids.includes(selection.only)) throw unknown(selection.only, labels.only);
  if (selection.from !== undefined && selection.only !== undefined) {
    throw new UserError(errorCodes.PHASE_SELECTION_CONFLICT, `${labels.from} and ${labels.only} were both given`, {
      why: "a run either starts from one phase and goes on to the end, or runs one phase alone",
      next: `give one of ${labels.from} or ${labels.only}`,
    });
  }
  for (const chosen of [selection.from, selection.only]) {
    if (chosen !== undefined && skip.includes(chosen)) {
      throw new UserError(errorCodes.PHASE_SELECTION_CONFLICT, `phase ${chosen} is both chosen to run and skipped`, {
        next: `leave ${chosen} out of ${labels.skip}`,
        facts: { phase: chosen },
      });
    }
  }
  const out = new Map<string, string>();
  const fromIndex = selection.from === undefined ? 0 : ids.indexOf(selection.from);
  ids.forEach((id, index) => {
    if (selection.only !== undefined && id !== selection.only) out.set(id, `not ${selection.only} (${labels.only})`);
    else if (index < fromIndex) out.set(id, `before ${selection.from} (${labels.from})`);
    else if (skip.includes(id)) out.set(id, `skipped (${labels.skip})`);
  });
  return out;
}
