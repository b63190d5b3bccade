import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** Release description, signing and verification codes (docs/errors.md lists them). */
export const errorCodes = defineErrorCodes("release", {
  RELEASE_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "A release description has problems (each with its line and field).",
  },
  RELEASE_POLICY_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The release policy file is malformed (each problem with its line and field); nothing was verified.",
  },
  RELEASE_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The registry has no release under that reference.",
  },
  RELEASE_NOT_A_RELEASE: {
    exitCode: ExitCode.InvalidInput,
    meaning: "The reference names an OCI artifact that is not a release description.",
  },
  RELEASE_UNSIGNED: {
    exitCode: ExitCode.CheckFailed,
    meaning: "The release has no Sigstore bundle attached as a referrer.",
  },
  RELEASE_SIGNATURE_INVALID: {
    exitCode: ExitCode.CheckFailed,
    meaning: "The release's signature does not verify: it was altered, or it signs other content.",
  },
  RELEASE_UNTRUSTED_SIGNER: {
    exitCode: ExitCode.CheckFailed,
    meaning: "The release is signed, but not by a key or identity the policy trusts.",
  },
  RELEASE_POLICY_UNMET: {
    exitCode: ExitCode.CheckFailed,
    meaning:
      "The release's signature lacks a verified timestamp or transparency-log entry that the policy requires (the message names the setting).",
  },
  RELEASE_DIGEST_MISMATCH: {
    exitCode: ExitCode.CheckFailed,
    meaning: "Content the registry served for the release does not hash to its digest.",
  },
  RELEASE_ARTIFACT_MISSING: {
    exitCode: ExitCode.NotFound,
    meaning: "A chart, image or other artifact the release lists is not in the registry at its digest.",
  },
  RELEASE_REGISTRY_UNREACHABLE: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "The registry holding the release could not be reached, did not answer in time, or stayed busy or failing (429, 5xx) after the retries of each read.",
  },
  RELEASE_REGISTRY_AUTH_REFUSED: {
    exitCode: ExitCode.Unauthorized,
    meaning: "The registry (or its token endpoint) refused the credentials used to read the release.",
  },
});
