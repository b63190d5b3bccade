export { ApiError } from "./api-error.ts";
export { artifactUrl, buildArtifacts, type ServedArtifact, servedPins } from "./artifacts.ts";
export {
  type ArtifactFault,
  CHAOS_MODES,
  type ChaosMode,
  type ChaosOptions,
  DEV_TOKEN,
  type NodeRingsEmulatorOptions,
  type RequestRecord,
  type RunningNodeRingsEmulator,
  startNodeRingsEmulator,
  type TokenSpec,
} from "./emulator.ts";
export type { RequestLog } from "./request-log.ts";
export { DEFAULT_PLATFORM, DEFAULT_TIMING, type EmulatorState, type Platform, type Timing } from "./state.ts";
export { StateFileError } from "./store.ts";
