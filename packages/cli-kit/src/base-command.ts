import { escapeControl } from "@nodekit/errors";
import type { Plan } from "@nodekit/plan";
import { createExecaRunner, type ProcessRunner, Redactor } from "@nodekit/process";
import type { Interfaces } from "@oclif/core";
import { Command } from "@oclif/core/command";
import * as Errors from "@oclif/core/errors";
import { globalFlags } from "./flags.ts";
import { createLogger, type Logger } from "./logger.ts";
import {
  type Column,
  createListPrinter,
  flushStdio,
  formatOne,
  type ListPrinter,
  type OutputFormat,
  type Rendered,
  renderOutput,
  renderPlan,
  writeOut,
} from "./output.ts";
import { createProgressRenderer, type ProgressRenderer } from "./progress.ts";
import { describeFailure, type Hints } from "./render-error.ts";

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)["baseFlags"] & T["flags"]
>;
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T["args"]>;

/**
 * oclif reads a missing positional argument from stdin when stdin is not a terminal, so
 * `echo x | nvkectl get clusters` would show cluster "x", and a command in a `while read`
 * loop would eat the loop's input (after waiting up to 10 ms for it). Neither kubectl nor
 * helm does that: arguments come from argv only.
 */
function argsFromArgvOnly(args: Interfaces.ArgInput | undefined): Interfaces.ArgInput | undefined {
  if (args === undefined) return undefined;
  return Object.fromEntries(Object.entries(args).map(([name, arg]) => [name, { ...arg, ignoreStdin: true }]));
}

/**
 * The base of every nr and nvkectl command: global flags, a redacting logger on stderr,
 * results on stdout, and one place where failures become a message and an exit code.
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = globalFlags;

  protected flags!: BaseFlags<T>;
  protected args!: BaseArgs<T>;
  /** Every secret the command handles is registered here; logs and echoes pass through it. */
  protected readonly redactor = new Redactor();
  protected logger: Logger = createLogger({ redactor: this.redactor, json: process.argv.includes("--json-logs") });

  override async init(): Promise<void> {
    await super.init();
    const { args, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (this.ctor as typeof BaseCommand).baseFlags,
      args: argsFromArgvOnly(this.ctor.args),
      strict: this.ctor.strict,
      enableJsonFlag: false,
    });
    this.flags = flags as BaseFlags<T>;
    this.args = args as BaseArgs<T>;
    const base = flags as { verbose?: boolean; "json-logs"?: boolean };
    this.logger = createLogger({
      verbose: base.verbose ?? false,
      json: base["json-logs"] ?? false,
      redactor: this.redactor,
    });
  }

  /**
   * Write a result to stdout (a line; waits when the pipe is full). Control characters are
   * escaped (a name or ID the controller sent cannot drive the terminal); `raw` writes data
   * meant for a file or another program as it is (a kubeconfig, a generated spec).
   */
  protected async out(text: string, options: { raw?: boolean } = {}): Promise<void> {
    if (text === "") return;
    const shown = options.raw ? text : escapeControl(text, { multiline: true });
    await writeOut(shown.endsWith("\n") ? shown : `${shown}\n`);
  }

  /** Print rows in the format `-o` asked for; an empty table says so on stderr, as kubectl does. */
  protected async print<R>(
    format: OutputFormat,
    rendered: Rendered<R>,
    emptyMessage = "No resources found.",
  ): Promise<void> {
    const text = renderOutput(format, rendered);
    if (text === "" && (format === "table" || format === "wide")) this.logger.info(emptyMessage);
    else await writeOut(text);
  }

  /**
   * Print a list whose pages arrive one by one: `fill` hands each page to `add`. An empty
   * table says "No resources found." on stderr, as kubectl does; json and yaml print `[]`.
   */
  protected async printList<R>(
    format: OutputFormat,
    columns: readonly Column<R>[],
    fill: (add: ListPrinter<R>["add"]) => Promise<unknown>,
    emptyMessage = "No resources found.",
  ): Promise<number> {
    const printer = createListPrinter(format, columns);
    await fill((items) => printer.add(items));
    const count = await printer.end();
    if (count === 0 && (format === "table" || format === "wide")) this.logger.info(emptyMessage);
    return count;
  }

  /** Print one object: json, yaml, or a one-row table (`header: false` for the rows after the first of a watch). */
  protected async printOne<R>(
    format: OutputFormat,
    columns: readonly Column<R>[],
    item: R,
    header = true,
  ): Promise<void> {
    await writeOut(formatOne(format, columns, item, header));
  }

  /**
   * Print a plan, which is what `--dry-run` shows: one copy-pasteable, redacted line per call
   * (table), or the versioned plan document (json, yaml). Nothing is run.
   */
  protected async printPlan(plan: Plan, format: OutputFormat = "table"): Promise<void> {
    await writeOut(renderPlan(plan, format, this.redactor));
  }

  /** Progress on stderr: a live list on a TTY, `[key] …` lines otherwise, NDJSON with --json-logs. */
  protected progress(): Promise<ProgressRenderer> {
    const base = this.flags as { "json-logs"?: boolean };
    return createProgressRenderer({ json: base["json-logs"] ?? false, logger: this.logger });
  }

  /** The process runner for this command: every call's redacted line is logged under -v. */
  protected processRunner(): ProcessRunner {
    return createExecaRunner({ redactor: this.redactor, onCall: (line) => this.logger.debug(`running ${line}`) });
  }

  /** The CLI's own next steps per error code (its commands), added after the library's. */
  protected hints(): Hints | undefined {
    return undefined;
  }

  protected override async catch(error: Error & { exitCode?: number }): Promise<unknown> {
    if (error instanceof Errors.ExitError) throw error;
    const failure = describeFailure(error, {
      bin: this.config.bin,
      version: this.config.version,
      hints: this.hints(),
    });
    this.logger.error(failure.message, failure.fields, failure.details);
    if (failure.stack) this.logger.debug(failure.stack);
    // oclif ends the process with process.exit: let a long report through a pipe get out first.
    await flushStdio();
    this.exit(failure.exitCode);
  }
}
