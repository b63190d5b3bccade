export {
  catalogue,
  defineErrorCodes,
  type ErrorCode,
  type ErrorCodeSpec,
  type ErrorCodeTable,
} from "./catalogue.ts";
export { errorCodes } from "./codes.ts";
export {
  BugError,
  type ErrorFacts,
  formatUserError,
  invalidInput,
  isUserError,
  UserError,
  type UserErrorOptions,
} from "./errors.ts";
export { type EscapeOptions, escapeControl, escapeJsonControl } from "./escape.ts";
export { ExitCode, type ExitCodeName, type ExitCodeValue, exitCodeDescriptions } from "./exit-codes.ts";
export { formatPath, formatProblem, hasErrors, isError, type Problem } from "./problem.ts";
