import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** The permanent error codes of `@nodekit/noderings-api` (listed in docs/errors.md). */
export const errorCodes = defineErrorCodes("noderings-api", {
  NODERINGS_NO_TOKEN: {
    exitCode: ExitCode.Unauthorized,
    meaning: "No NodeRings API token was given, so no request was sent.",
  },
  NODERINGS_UNAUTHORIZED: {
    exitCode: ExitCode.Unauthorized,
    meaning: "The NodeRings API refused the token (401) or the action (403); its message is shown verbatim.",
  },
  NODERINGS_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The NodeRings API has no such object (404); its message is shown verbatim.",
  },
  NODERINGS_CONFLICT: {
    exitCode: ExitCode.Conflict,
    meaning: "The request conflicts with the object's state in NodeRings (409), e.g. a name already taken.",
  },
  NODERINGS_REJECTED: {
    exitCode: ExitCode.Rejected,
    meaning:
      "The NodeRings API refused the request (400, 422, other 4xx); its message and each field's problem are shown.",
  },
  NODERINGS_RATE_LIMITED: {
    exitCode: ExitCode.Unreachable,
    meaning: "The NodeRings API kept answering 429, or asked to wait longer than the client waits; retry later.",
  },
  NODERINGS_SERVER_ERROR: {
    exitCode: ExitCode.Unreachable,
    meaning: "The NodeRings API failed (5xx), also after the retries where the request may be retried.",
  },
  NODERINGS_BAD_RESPONSE: {
    exitCode: ExitCode.Unreachable,
    meaning: "Something other than the NodeRings API answered (an HTML page, a body that is not the contract).",
  },
  NODERINGS_UNREACHABLE: {
    exitCode: ExitCode.Unreachable,
    meaning: "The NodeRings API could not be reached (connection refused or reset, name not resolved).",
  },
  NODERINGS_RESPONSE_TOO_LARGE: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "An answer of the NodeRings API was longer than the most the client reads (16 MiB by default, counted after decompression); it was not read further.",
  },
  NODERINGS_REDIRECTED: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "The answer redirected to another origin (or in a loop); the API never does, so it was not followed and the token went nowhere else.",
  },
  NODERINGS_TIMEOUT: {
    exitCode: ExitCode.Unreachable,
    meaning: "The NodeRings API did not answer, or did not finish its answer, within the deadline.",
  },
  AGENT_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "No agent with that name (or id) exists in the NodeRings account.",
  },
  PEERING_FAILED: {
    exitCode: ExitCode.Rejected,
    meaning: "NodeRings reported that it could not complete the peering; its message is shown verbatim.",
  },
  PEERING_TIMEOUT: {
    exitCode: ExitCode.Unreachable,
    meaning: "NodeRings did not complete the inbound peering within the wait; it may still complete later.",
  },
  DOWNLOAD_DIGEST_MISMATCH: {
    exitCode: ExitCode.CheckFailed,
    meaning: "A downloaded file's sha256 differs from its pinned digest; the file was discarded and nothing installed.",
  },
  DOWNLOAD_TRUNCATED: {
    exitCode: ExitCode.Unreachable,
    meaning: "A download ended before the whole file arrived; the partial file was discarded.",
  },
  DOWNLOAD_TOO_LARGE: {
    exitCode: ExitCode.CheckFailed,
    meaning:
      "A download whose pin gives no size sent more than the ceiling (256 MiB by default); nothing was kept. A pinned size is held exactly (DOWNLOAD_DIGEST_MISMATCH).",
  },
  DOWNLOAD_FAILED: {
    exitCode: ExitCode.Unreachable,
    meaning:
      "A download could not be made (HTTP error, unreachable, stalled or too slow, or redirected somewhere the pins' URL rule refuses: not https, or plain http off this machine); nothing was kept.",
  },
  DOWNLOAD_WRITE_FAILED: {
    exitCode: ExitCode.Precondition,
    meaning: "A downloaded file could not be written (permissions, disk full); nothing was kept.",
  },
});
