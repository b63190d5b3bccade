export {
  assertContent,
  type ContentCheckOptions,
  type ContentFailure,
  type ContentReport,
  checkArtifactContent,
} from "./content.ts";
export {
  type ListedArtifact,
  listedArtifacts,
  parseReleaseDescription,
  RELEASE_API_VERSION,
  type ReleaseDescription,
  releaseDescriptionSchema,
  serializeReleaseDescription,
} from "./description.ts";
export { errorCodes as releaseErrorCodes } from "./errors.ts";
export { generateSigningKeyPair, keyHint, localKeySigner } from "./keys.ts";
export * from "./media-types.ts";
export {
  componentsFileName,
  fetchProviderFiles,
  type ImageMatch,
  imageRepository,
  pinnedProfiles,
  releaseImageFor,
} from "./pins.ts";
export {
  buildReleasePolicy,
  loadReleasePolicy,
  parseReleasePolicy,
  type ReleasePolicy,
  type ReleasePolicyDocument,
  releasePolicySchema,
} from "./policy.ts";
export {
  type AttachedSignature,
  attachBundle,
  type PublishedRelease,
  type PushReleaseOptions,
  publishRelease,
  pushReleaseDescription,
  type SignOptions,
  signArtifact,
} from "./publish.ts";
export {
  type FetchedRelease,
  type FetchReleaseOptions,
  fetchRelease,
  type VerifiedRelease,
  type VerifyReleaseOptions,
  verifyBundle,
  verifyRelease,
} from "./verify.ts";
