import type { Command } from "@oclif/core";
import { ExitError } from "@oclif/core/errors";
import type { Logger } from "@oclif/core/interfaces";
import { setLogger } from "@oclif/core/logger";
import { manifestConfig } from "./manifest-config.ts";
import type { StartPlan } from "./plan.ts";
import type { ShippedCli } from "./shipped.ts";
import { traceStartup } from "./trace.ts";

/**
 * Runs one of the CLI's own commands (or its --help) on a Config built from the shipped
 * manifest, and ends as oclif's `execute` does: output flushed, then the command's exit code.
 */
export async function runFast(cli: ShippedCli, plan: Extract<StartPlan, { kind: "command" | "help" }>): Promise<void> {
  const config = manifestConfig(cli);
  // oclif's debug lines go nowhere here (the fast path is never taken with DEBUG set), so its
  // logger is one that drops them: the `debug` package (and supports-color) need not load.
  setLogger({ root: cli.root, logger: silentLogger("oclif") });
  try {
    if (plan.kind === "help") {
      const { NodekitHelp } = await import("../help.ts");
      await new NodekitHelp(config).showHelp(plan.argv);
    } else {
      const cached = config.findCommand(plan.command.id) as Command.Loadable | undefined;
      if (cached === undefined) throw new Error(`the manifest lists no command ${plan.command.id}`);
      traceStartup("fast path loaded (with oclif's command and errors)");
      const Class = await cached.load();
      traceStartup("command module loaded");
      const command = new (Class as unknown as new (argv: string[], config: unknown) => Command)(plan.argv, config);
      await (command as unknown as { _run(): Promise<unknown> })._run();
      traceStartup("command done");
    }
    await drained();
  } catch (error) {
    if (!(error instanceof ExitError)) throw error;
    await drained();
    process.exit(error.oclif.exit ?? 1);
  }
}

/** An oclif Logger that writes nothing (oclif's own writes only when DEBUG names it). */
function silentLogger(namespace: string): Logger {
  const nothing = () => {};
  return {
    namespace,
    debug: nothing,
    error: nothing,
    info: nothing,
    trace: nothing,
    warn: nothing,
    child: (ns: string, delimiter?: string) => silentLogger(`${namespace}${delimiter ?? ":"}${ns}`),
  };
}

/** Resolves once everything written to stdout and stderr so far has been handed to the OS. */
function drained(): Promise<void> {
  const flush = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => {
      if (stream.writableLength === 0) resolve();
      else stream.write("", () => resolve());
    });
  return Promise.all([flush(process.stdout), flush(process.stderr)]).then(() => {});
}
