export { type Challenge, parseChallenges } from "./challenge.ts";
export {
  type Descriptor,
  type FetchedManifest,
  fallbackTag,
  OciClient,
  type OciClientOptions,
  type PingResult,
  type PushedManifest,
  type Referrers,
  type SecretSink,
} from "./client.ts";
export {
  anonymous,
  type Credential,
  type CredentialFileOptions,
  type CredentialStore,
  chainCredentials,
  configFileCredentials,
  credentialFilePaths,
  DEFAULT_ENV_CREDENTIAL_NAMES,
  defaultCredentials,
  type EnvCredentialNames,
  envCredentials,
  formatAuthsFile,
  parseAuthsFile,
} from "./credentials.ts";
export { digestOf, isDigest, matchesDigest } from "./digest.ts";
export { errorCodes as ociErrorCodes } from "./errors.ts";
export { EMPTY_DESCRIPTOR, EMPTY_JSON, MANIFEST_MEDIA_TYPES, MediaType } from "./media-types.ts";
export { formatReference, manifestIdentifier, parseReference, type Reference } from "./reference.ts";
