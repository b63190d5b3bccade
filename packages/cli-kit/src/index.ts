export { type BaseArgs, BaseCommand, type BaseFlags } from "./base-command.ts";
export { dryRunFlag, globalFlags, outputFlag } from "./flags.ts";
export { createLogger, type LogFields, type Logger, type LoggerOptions, type LogLevel } from "./logger.ts";
export { Args, Flags } from "./oclif.ts";
export { type Column, formatTable, OUTPUT_FORMATS, type OutputFormat, type Rendered, renderOutput } from "./output.ts";
export { describeFailure, type Failure, type FailureContext, type Hints } from "./render-error.ts";
