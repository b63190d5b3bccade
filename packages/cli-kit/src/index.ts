export { type BaseArgs, BaseCommand, type BaseFlags } from "./base-command.ts";
export { dryRunFlag, globalFlags, outputFlag } from "./flags.ts";
export { createLogger, type LogFields, type Logger, type LoggerOptions, type LogLevel } from "./logger.ts";
export { Args, Flags } from "./oclif.ts";
export {
  type Column,
  cell,
  createListPrinter,
  flushStdio,
  formatOne,
  formatTable,
  type ListPrinter,
  OUTPUT_FORMATS,
  type OutputFormat,
  type OutStream,
  type Rendered,
  renderOutput,
  renderPlan,
  visibleColumns,
  writeOut,
} from "./output.ts";
export {
  createProgressRenderer,
  type ProgressOptions,
  type ProgressRenderer,
  type ProgressState,
  type ProgressUpdate,
  planProgress,
} from "./progress.ts";
export { describeFailure, type Failure, type FailureContext, type Hints } from "./render-error.ts";
