export { type CommandCall, type CommandResult, formatCall, shellQuote } from "./call.ts";
export { childEnv, GO_RUNTIME_ENV, INHERITED_ENV, matchesEnvName } from "./env.ts";
export { errorCodes as processErrorCodes } from "./errors.ts";
export { MIN_SECRET_LENGTH, REDACTED, Redactor, redactCredentialFields } from "./redactor.ts";
export {
  CommandFailedError,
  createExecaRunner,
  createRecordingRunner,
  type ExecaRunnerOptions,
  type ProcessRunner,
  type RecordedCall,
  type RecordingRunner,
  type RunOptions,
} from "./runner.ts";
