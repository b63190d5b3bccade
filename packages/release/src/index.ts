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
export {
  COSIGN_SIGN_PREDICATE_TYPE,
  IN_TOTO_PAYLOAD_TYPE,
  IN_TOTO_STATEMENT_TYPE,
  RELEASE_ARTIFACT_TYPE,
  RELEASE_DESCRIPTION_MEDIA_TYPE,
  SIGSTORE_BUNDLE_ARTIFACT_TYPE,
} from "./media-types.ts";
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
