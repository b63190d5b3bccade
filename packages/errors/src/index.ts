export { BugError, formatUserError, invalidInput, isUserError, UserError, type UserErrorOptions } from "./errors.ts";
export { ExitCode, type ExitCodeName, type ExitCodeValue, exitCodeDescriptions } from "./exit-codes.ts";
export { formatPath, formatProblem, hasErrors, isError, type Problem } from "./problem.ts";
