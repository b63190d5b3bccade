import { defineErrorCodes, ExitCode } from "@nodekit/errors";

/** How a call to the NVKE controller API can fail. The controller's own message is kept verbatim. */
export const errorCodes = defineErrorCodes("nvke-api", {
  CONTROLLER_REJECTED: {
    exitCode: ExitCode.Rejected,
    meaning: "The controller refused the request (400, 422, …); its message is shown as it sent it.",
  },
  CONTROLLER_CONFLICT: {
    exitCode: ExitCode.Conflict,
    meaning:
      "The controller refused the request as conflicting with current state (409: the name exists already, the object is being deleted, …); its message is shown as it sent it.",
  },
  CONTROLLER_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The controller has no object with that ID (404); its message is shown as it sent it.",
  },
  CONTROLLER_UNAUTHORIZED: {
    exitCode: ExitCode.Unauthorized,
    meaning: "The controller refused the credentials (401 or 403).",
  },
  CONTROLLER_ERROR: {
    exitCode: ExitCode.Unreachable,
    meaning: "The controller failed the request (5xx); its message is shown as it sent it.",
  },
  CONTROLLER_BAD_RESPONSE: {
    exitCode: ExitCode.Unreachable,
    meaning: "Something other than the controller answered (a proxy's HTML page, a body outside the API contract).",
  },
  CONTROLLER_UNREACHABLE: {
    exitCode: ExitCode.Unreachable,
    meaning: "The controller could not be reached: connection refused or reset, or its host name does not resolve.",
  },
  CONTROLLER_TIMEOUT: {
    exitCode: ExitCode.Unreachable,
    meaning: "The controller did not answer in time.",
  },
  CLUSTER_NOT_FOUND: { exitCode: ExitCode.NotFound, meaning: "The controller has no tenant cluster of that name." },
  NODEPOOL_NOT_FOUND: {
    exitCode: ExitCode.NotFound,
    meaning: "The tenant cluster has no node pool of that name.",
  },
});
