import { errorCodes, escapeControl, UserError } from "@nodekit/errors";
import type { Plan } from "@nodekit/plan";
import { createExecaRunner, MIN_SECRET_LENGTH, type ProcessRunner, Redactor } from "@nodekit/process";
import type { Interfaces } from "@oclif/core";
import { Command } from "@oclif/core/command";
import * as Errors from "@oclif/core/errors";
import { globalFlags } from "./flags.ts";
import { createLogger, type Logger } from "./logger.ts";
import {
  type Columns,
  createListPrinter,
  createWatchPrinter,
  flushStdio,
  formatOne,
  isTableFormat,
  jsonPathTemplate,
  type ListPrinter,
  type OutputFormat,
  type PrintOptions,
  type Rendered,
  renderOutput,
  renderPlan,
  type WatchPrinter,
  writeOut,
} from "./output.ts";
import { createProgressRenderer, type ProgressRenderer } from "./progress.ts";
import { describeFailure, type Hints } from "./render-error.ts";
import type { CommandShape } from "./usage-errors.ts";

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
  /**
   * Every secret the command handles is registered here; logs and echoes pass through it. A
   * secret too short to redact (under MIN_SECRET_LENGTH characters) is not, and the command
   * says so on stderr, naming it (never its value).
   */
  protected readonly redactor = new Redactor({
    onShortSecret: (what) =>
      this.logger.warn(
        `${what ?? "a secret this command was given"} is shorter than ${MIN_SECRET_LENGTH} characters, so it is not hidden in logs or echoed commands (hiding so short a value would change ordinary text on every line and show the secret by its gaps); use a longer one`,
      ),
  });
  protected logger: Logger = createLogger({ redactor: this.redactor, json: process.argv.includes("--json-logs") });

  override async init(): Promise<void> {
    await super.init();
    let parsed: { args: Record<string, unknown>; flags: Record<string, unknown> };
    try {
      parsed = await this.parse({
        flags: this.ctor.flags,
        baseFlags: this.ctor.baseFlags,
        args: argsFromArgvOnly(this.ctor.args),
        strict: this.ctor.strict,
        enableJsonFlag: false,
      });
    } catch (error) {
      // A missing argument or a mistyped flag, said as the user would fix it (loaded only
      // then: its suggestions need a string-distance package no run that parses needs).
      const { usageError } = await import("./usage-errors.ts");
      throw (
        usageError(error, {
          bin: this.config.bin,
          id: this.id ?? this.ctor.id,
          flags: { ...this.ctor.baseFlags, ...this.ctor.flags },
          args: this.ctor.args,
          examples: this.ctor.examples as CommandShape["examples"],
        }) ?? error
      );
    }
    const { args, flags } = parsed;
    this.flags = flags as BaseFlags<T>;
    this.args = args as BaseArgs<T>;
    const base = flags as { verbose?: boolean; "json-logs"?: boolean };
    this.logger = createLogger({
      verbose: base.verbose ?? false,
      json: base["json-logs"] ?? false,
      redactor: this.redactor,
    });
    // A --sort-by that cannot be read is a usage error before the command reads anything.
    if ((flags as { "sort-by"?: string })["sort-by"] !== undefined) await this.printOptions("table");
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

  /**
   * What the command's list flags asked for (`--no-headers`, `--show-labels`, `--sort-by`,
   * from `listFlags`, when it has them) and the compiled `-o jsonpath=` template. A
   * `--sort-by` expression that cannot be read is a usage error.
   */
  protected async printOptions(format: OutputFormat): Promise<PrintOptions> {
    const flags = this.flags as { "no-headers"?: boolean; "show-labels"?: boolean; "sort-by"?: string };
    const options: PrintOptions = {};
    if (flags["no-headers"]) options.noHeaders = true;
    if (flags["show-labels"]) options.showLabels = true;
    const template = jsonPathTemplate(format);
    const sortBy = flags["sort-by"];
    if (template === undefined && sortBy === undefined) return options;
    const { compareSortValues, compileSortKey, compileTemplate } = await import("./jsonpath.ts");
    // The flag's parser checked the template already.
    if (template !== undefined) options.template = compileTemplate(template);
    if (sortBy !== undefined) {
      try {
        options.sortKey = compileSortKey(sortBy);
        options.compare = compareSortValues;
      } catch (error) {
        throw new UserError(errorCodes.USAGE, `--sort-by ${JSON.stringify(sortBy)} ${(error as Error).message}`, {
          next: "give a JSONPath field of the objects -o json prints, such as --sort-by .name",
        });
      }
    }
    return options;
  }

  /** Print rows in the format `-o` asked for; an empty table says so on stderr, as kubectl does. */
  protected async print<R>(
    format: OutputFormat,
    rendered: Rendered<R>,
    emptyMessage = "No resources found.",
  ): Promise<void> {
    const text = await renderOutput(format, rendered, await this.printOptions(format));
    if (text === "" && isTableFormat(format)) this.logger.info(emptyMessage);
    else await writeOut(text);
  }

  /**
   * Print a list whose pages arrive one by one: `fill` hands each page to `add`. An empty
   * table says "No resources found." on stderr, as kubectl does; json and yaml print `[]`.
   */
  protected async printList<R>(
    format: OutputFormat,
    columns: Columns<R>,
    fill: (add: ListPrinter<R>["add"]) => Promise<unknown>,
    emptyMessage = "No resources found.",
  ): Promise<number> {
    const printer = createListPrinter(format, columns, undefined, await this.printOptions(format));
    await fill((items) => printer.add(items));
    const count = await printer.end();
    if (count === 0 && isTableFormat(format)) this.logger.info(emptyMessage);
    return count;
  }

  /** Print one object: json, yaml, name, jsonpath, or a one-row table (`header: false` leaves out the header). */
  protected async printOne<R>(format: OutputFormat, columns: Columns<R>, item: R, header = true): Promise<void> {
    await writeOut(await formatOne(format, columns, item, header, await this.printOptions(format)));
  }

  /** The printer for `-w`: aligned table rows under one header, a `---` separated YAML stream, … */
  protected async watchPrinter<R>(format: OutputFormat, columns: Columns<R>): Promise<WatchPrinter<R>> {
    return createWatchPrinter(format, columns, undefined, await this.printOptions(format));
  }

  /**
   * Print a plan, which is what `--dry-run` shows: one copy-pasteable, redacted line per call
   * (table), or the versioned plan document (json, yaml). Nothing is run.
   */
  protected async printPlan(plan: Plan, format: OutputFormat = "table"): Promise<void> {
    await writeOut(await renderPlan(plan, format, this.redactor));
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
    // In text the details (problems, why, next) are printed under the message; under -v the
    // fields would say them all again on the message's line, so text gets the code only.
    const json =
      (this.flags as { "json-logs"?: boolean } | undefined)?.["json-logs"] ?? process.argv.includes("--json-logs");
    const fields = json ? failure.fields : { code: failure.fields.code, exitCode: failure.exitCode };
    this.logger.error(failure.message, fields, failure.details);
    if (failure.stack) this.logger.debug(failure.stack);
    // oclif ends the process with process.exit: let a long report through a pipe get out first.
    await flushStdio();
    this.exit(failure.exitCode);
  }
}
