export { type CommandCall, type CommandResult, formatCall, shellQuote } from "./call.ts";
export { errorCodes as processErrorCodes } from "./errors.ts";
export { REDACTED, Redactor } from "./redactor.ts";
export {
  CommandFailedError,
  createDryRunRecorder,
  createExecaRunner,
  type DryRunRecorder,
  type ExecaRunnerOptions,
  type ProcessRunner,
  type RecordedCall,
  type RunOptions,
} from "./runner.ts";
