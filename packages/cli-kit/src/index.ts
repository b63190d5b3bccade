export { type BaseArgs, BaseCommand, type BaseFlags } from "./base-command.ts";
export { parseDuration } from "./duration.ts";
export { errorCodes as cliKitErrorCodes } from "./errors.ts";
export { dryRunFlag, globalFlags, listFlags, outputFlag } from "./flags.ts";
export { showHelpFor } from "./help-command.ts";
export { type CliEntry, engineProblem, launch, MINIMUM_NODE } from "./launch/bin.ts";
export { run } from "./launch/run.ts";
export { traceStartup } from "./launch/trace.ts";
export { createLogger, type LogFields, type Logger, type LoggerOptions, type LogLevel } from "./logger.ts";
export { commandNotFound, suggestCommands } from "./not-found.ts";
export { Args, Flags } from "./oclif.ts";
export {
  type Column,
  type Columns,
  cell,
  createListPrinter,
  createWatchPrinter,
  flushStdio,
  formatOne,
  formatTable,
  isTableFormat,
  type ListPrinter,
  OUTPUT_FORMATS,
  type OutputFormat,
  type OutStream,
  type PrintOptions,
  type Rendered,
  renderOutput,
  renderPlan,
  type View,
  visibleColumns,
  type WatchPrinter,
  writeOut,
} from "./output.ts";
export {
  createProgressRenderer,
  type ProgressEvent,
  type ProgressOptions,
  type ProgressRenderer,
  type ProgressState,
  type ProgressUpdate,
  runProgress,
} from "./progress.ts";
export { describeFailure, type Failure, type FailureContext, type Hints } from "./render-error.ts";
