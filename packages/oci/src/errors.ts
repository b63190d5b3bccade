import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** The OCI client's error codes (docs/errors.md lists them with every other package's). */
export const errorCodes = defineErrorCodes("oci", {
  OCI_INVALID_REFERENCE: {
    exitCode: ExitCode.InvalidInput,
    meaning: "An OCI reference is not of the form registry/repository[:tag][@digest].",
  },
  OCI_UNREACHABLE: {
    exitCode: ExitCode.Unreachable,
    meaning: "The registry (or its token endpoint) could not be reached, or did not answer in time.",
  },
  OCI_TLS_UNTRUSTED: {
    exitCode: ExitCode.Unreachable,
    meaning: "The registry's TLS certificate is not signed by a trusted CA, or does not name the host.",
  },
  OCI_AUTH_REFUSED: {
    exitCode: ExitCode.Unauthorized,
    meaning: "The registry or its token endpoint refused the credentials, or none were found for it.",
  },
  OCI_CREDENTIALS_INVALID: {
    exitCode: ExitCode.InvalidInput,
    meaning: "A docker or helm registry config file could not be read as JSON with an auths map.",
  },
  OCI_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The registry has no such repository, tag, manifest or blob.",
  },
  OCI_DIGEST_MISMATCH: {
    exitCode: ExitCode.CheckFailed,
    meaning: "Content the registry served does not hash to the digest it was asked for.",
  },
  OCI_TOO_LARGE: {
    exitCode: ExitCode.CheckFailed,
    meaning: "The registry served more bytes than the size cap for that kind of content.",
  },
  OCI_REGISTRY_ERROR: {
    exitCode: ExitCode.Rejected,
    meaning: "The registry answered with an error or with content that is not what the distribution API specifies.",
  },
});
