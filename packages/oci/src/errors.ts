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
  OCI_TOKEN_REALM_REFUSED: {
    exitCode: ExitCode.Unauthorized,
    meaning:
      "The registry's Bearer challenge sends token requests to another host or scheme than its own; its credentials were not sent there (a host can be allowed; a plain-http realm for an https registry never is).",
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
  OCI_MANIFEST_INVALID: {
    exitCode: ExitCode.CheckFailed,
    meaning:
      "A manifest the registry served does not have the shape the image spec gives its media type (layers not a list, a descriptor without a digest, …); each problem names its field.",
  },
  OCI_REGISTRY_UNAVAILABLE: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "The registry answered 429 or a 5xx: busy or failing. Reads were retried as its Retry-After asked; try again later.",
  },
  OCI_REGISTRY_ERROR: {
    exitCode: ExitCode.Rejected,
    meaning: "The registry answered with an error or with content that is not what the distribution API specifies.",
  },
});
