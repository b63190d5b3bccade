export { type RequiredArtifact, requireArtifact } from "./artifact.ts";
export { DEFAULT_PINS } from "./defaults.ts";
export { errorCodes as versionPinsErrorCodes } from "./errors.ts";
export { canonicalJson, pinSetHash } from "./hash.ts";
export { type ParsePinsOptions, parsePins, validatePins } from "./parse.ts";
export { fetchPins, type OfflinePinsOptions, offlinePins, type PinsSource, type ResolvedPins } from "./resolve.ts";
export {
  ARCHITECTURES,
  type Arch,
  ArchSchema,
  type Artifact,
  ArtifactSchema,
  type Chart,
  ChartSchema,
  DownloadUrlSchema,
  isDownloadUrl,
  PIN_SET_SCHEMA_VERSION,
  type Pin,
  PinSchema,
  type PinSet,
  PinSetSchema,
  REQUIRED_TOOLS,
  type RequiredTool,
  Sha256Schema,
  type ToolName,
} from "./schema.ts";
