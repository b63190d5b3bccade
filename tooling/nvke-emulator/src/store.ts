import { parseStateFile, type StateFileFormat, StateStore } from "@nodekit/emulator-kit";
import { type EmulatorState, emptyState } from "./state.ts";
import { EmulatorStateSchema } from "./state-schema.ts";

const FORMAT: StateFileFormat<EmulatorState> = {
  schema: EmulatorStateSchema,
  what: "an NVKE emulator state file (version 1)",
  language: "JSON",
  empty: emptyState,
};

/**
 * The emulator's state file (the kit's store): JSON, checked in full at start (a file of the
 * wrong shape is refused with every problem's line and field path, and nothing starts),
 * written atomically after every change.
 */
export function openStateStore(path: string): Promise<StateStore<EmulatorState>> {
  return StateStore.open(path, FORMAT);
}

/** The state in `bytes` (the file at `path`), or a StateFileError naming every problem with its line. */
export function parseState(bytes: Uint8Array, path: string): EmulatorState {
  return parseStateFile(bytes, path, FORMAT);
}
