import { StateFileError, StateStore } from "@nodekit/emulator-kit";
import { type EmulatorState, emptyState, StateFileSchema } from "./state.ts";

export { StateFileError };

/** The emulator's state file (the kit's store): JSON, checked in full at start, written atomically after every change. */
export function openStateStore(path: string): Promise<StateStore<EmulatorState>> {
  return StateStore.open(path, {
    schema: StateFileSchema,
    what: "a NodeRings emulator state file (version 1)",
    empty: emptyState,
  });
}
