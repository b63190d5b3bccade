import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { arrangeArgv, asksForHelp } from "./launch/argv.ts";
import { codeCacheDir, codeCacheName, enableCompileCacheIn, requireWithCodeCache } from "./launch/code-cache.ts";
import {
  COMMAND_HOOKS,
  envPrefix,
  hasUserPlugins,
  knowsEveryFlag,
  type ManifestCommand,
  readShippedCli,
  readShippedPackage,
  type ShippedCli,
  type ShippedPackage,
} from "./launch/shipped.ts";

// `--version` loads this module and the launcher's own (argv.ts, shipped.ts) only: each module
// more is one more file to resolve, read and compile on every start, so the exit status and
// the start-up mark are written out here rather than imported (@nodekit/errors, ./trace.ts).

/** ExitCode.BrokenPipe of @nodekit/errors: the status of a process killed by SIGPIPE. */
const BROKEN_PIPE = 141;

/** traceStartup of ./trace.ts. */
const traceStartup = (label: string) => {
  if (process.env.NODEKIT_TRACE_STARTUP === "1") {
    process.stderr.write(`startup ${(process.uptime() * 1000).toFixed(1)} ${label}\n`);
  }
};

/** What the launcher does with a command line. */
export type StartPlan =
  | { kind: "version"; userAgent: string }
  | { kind: "help"; argv: string[] }
  | { kind: "command"; command: ManifestCommand; argv: string[] }
  | { kind: "topic"; topic: string; argv: string[] }
  | { kind: "full"; reason: string };

/**
 * Decides, from the shipped manifest alone, whether a command line can start without
 * oclif's Config.load (which loads every plugin): `--version`, `--help` of one of the CLI's
 * own commands, and any of its own commands whose flags are all known. Anything unusual
 * takes oclif's full start: a user or linked plugin (its init and prerun hooks must run),
 * a hook in the CLI's own package.json, oclif's debug variables, an unknown command or
 * flag (oclif's messages and suggestions), a plugin's command, the root help.
 */
export function planStart(cli: ShippedCli, argv: readonly string[], env: NodeJS.ProcessEnv): StartPlan {
  return planEarly(cli, argv, env) ?? planCommand(cli, argv);
}

/**
 * What the package.json alone decides, before the manifest is read: oclif's full start for
 * anything unusual, or `--version`. Undefined when the command line needs the manifest.
 */
function planEarly(
  cli: ShippedPackage,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Extract<StartPlan, { kind: "full" | "version" }> | undefined {
  const prefix = envPrefix(cli.bin);
  if (env[`${prefix}FULL_START`] === "1") return { kind: "full", reason: `${prefix}FULL_START=1` };
  if (env.DEBUG || env[`${prefix}DEBUG`] || env.NODE_ENV === "development") return { kind: "full", reason: "debug" };
  // The CLI's own command_not_found hook runs only for a command line the fast path never
  // takes (an unknown command goes to the full start), so it does not turn the fast path off.
  const hooks = Object.keys(cli.pjson.oclif.hooks ?? {}).filter(
    (hook) => hook !== "command_not_found" && (COMMAND_HOOKS as readonly string[]).includes(hook),
  );
  if (hooks.length > 0) return { kind: "full", reason: `hooks: ${hooks.join(", ")}` };
  if (hasUserPlugins(cli, env)) return { kind: "full", reason: "user plugins" };
  const { oclif } = cli.pjson;
  if ([...(oclif.additionalVersionFlags ?? []), "--version"].includes(argv[0] ?? "")) {
    const arch = process.arch === "ia32" ? "x86" : process.arch;
    return {
      kind: "version",
      userAgent: `${cli.pjson.name}/${cli.pjson.version} ${process.platform}-${arch} node-${process.version}`,
    };
  }
  return undefined;
}

/** The plan for a command line that is not `--version`, from the manifest. */
function planCommand(cli: ShippedCli, argv: readonly string[]): StartPlan {
  const { oclif } = cli.pjson;
  const arranged = arrangeArgv(argv, cli.table);
  const command = arranged.id === undefined ? undefined : cli.commands.get(arranged.id);
  if (asksForHelp(arranged.argv, ["--help", ...(oclif.additionalHelpFlags ?? [])])) {
    return command === undefined
      ? { kind: "full", reason: "help of no command of the CLI's own" }
      : {
          kind: "help",
          argv: arranged.argv.slice(0, arranged.words),
        };
  }
  if (command === undefined) {
    // Only the CLI's own commands are known here, so a topic is one when no plugin is installed.
    if (arranged.topic !== undefined) return { kind: "topic", topic: arranged.topic, argv: arranged.argv };
    return { kind: "full", reason: "no command of the CLI's own" };
  }
  if (command.pluginName !== cli.pjson.name || command.relativePath === undefined) {
    return { kind: "full", reason: "a plugin's command" };
  }
  const args = arranged.argv.slice(arranged.words);
  if (!knowsEveryFlag(command, args)) return { kind: "full", reason: "a flag the command does not declare" };
  return { kind: "command", command, argv: args };
}

/**
 * The entry point of the CLIs' bin scripts. It reads the shipped manifest and, when nothing
 * is unusual, runs the command (or its help, or `--version`) without loading oclif's plugin
 * machinery; anything else goes to oclif's full start. Both take global flags anywhere.
 */
export async function run(binUrl: string, argv: string[] = process.argv.slice(2)): Promise<void> {
  traceStartup("run (the bundle's entry loaded)");
  process.stdout.on("error", stopOnBrokenPipe);
  const root = dirname(dirname(fileURLToPath(binUrl)));
  // The package.json first: `--version` needs nothing else (the manifest is ≈ 130 KB of JSON).
  const pkg = readShippedPackage(root);
  const early = pkg === undefined ? undefined : planEarly(pkg, argv, process.env);
  // Node's compile cache for what loads from here on (`--version` loads nothing more): in the
  // user's own private cache directory only (launch/code-cache.ts), never in Node's default.
  if (pkg !== undefined && early?.kind !== "version") compileCache(codeCacheDir(pkg.dirname));
  // The launch index plans the start, runs a command and lists a topic's commands; help shows
  // what only the manifest holds (without one, oclif's full start shows it).
  const indexed = early === undefined ? readShippedCli(root, pkg, "index") : undefined;
  const planned: StartPlan =
    early ?? (indexed === undefined ? { kind: "full", reason: "no manifest" } : planCommand(indexed, argv));
  const cli = planned.kind === "help" ? readShippedCli(root, pkg) : indexed;
  const plan: StartPlan =
    planned.kind === "help" && cli === undefined ? { kind: "full", reason: "no manifest" } : planned;
  traceStartup(`planned (${plan.kind})`);
  if (plan.kind === "full") {
    const { fullStart } = await import("./launch/full-start.ts");
    await fullStart(binUrl, argv);
    return;
  }
  if (plan.kind === "version") {
    process.stdout.write(`${plan.userAgent}\n`);
    return;
  }
  if (cli === undefined) throw new Error(`no manifest for a ${plan.kind} plan`);
  if (plan.kind === "topic") {
    const { topicWithoutCommand } = await import("./launch/usage.ts");
    const commands = [...new Set(cli.commands.values())]
      .filter((command) => !command.hidden && command.id.startsWith(`${plan.topic}:`))
      .map((command) => ({ id: command.id, aliases: command.aliases ?? [] }));
    await topicWithoutCommand({ bin: cli.bin, version: cli.pjson.version, topic: plan.topic, commands, argv });
    return;
  }
  // The hot file holds the fast path (and a hot read's whole code): loaded with the code cache
  // an earlier run of this command wrote after it ran (launch/code-cache.ts).
  const hot = indexed?.hot;
  if (hot !== undefined) {
    const key = plan.kind === "help" ? "help" : plan.command.id;
    const state = requireWithCodeCache(join(root, hot), codeCacheDir(cli.dirname), codeCacheName(hot, key));
    traceStartup(`hot file loaded (code cache: ${state})`);
  }
  const { runFast } = await import("./launch/fast.ts");
  await runFast(cli, plan);
}

/**
 * Turns Node's compile cache on in `dir` when it is private; says on stderr when
 * NODE_COMPILE_CACHE has put it in a directory another user could write to (Node loaded this
 * CLI's first files from it before any of its code ran: nothing here can undo that).
 */
function compileCache(dir: string | undefined): void {
  const state = enableCompileCacheIn(dir);
  if (state.kind === "environment" && !state.private) {
    process.stderr.write(
      `warning: NODE_COMPILE_CACHE puts Node.js's compile cache in ${state.directory}, which is not a private directory of yours: another user who can write there can run code as you\nnext: unset NODE_COMPILE_CACHE (the CLI keeps its caches in a private directory of its own), or point it at a directory only you can write\n`,
    );
  }
  traceStartup(`compile cache: ${state.kind === "off" ? `off (${state.reason})` : state.directory}`);
}

/**
 * The reader closed the pipe (`nvkectl get clusters | head`): stop at once and say nothing,
 * with the status of a process killed by SIGPIPE, as kubectl has. Without this the write
 * error either surfaced as "unexpected failure" or left oclif waiting for a drain that never
 * comes (Node's exit 13, "unsettled top-level await").
 */
function stopOnBrokenPipe(error: NodeJS.ErrnoException): void {
  if (error.code === "EPIPE") process.exit(BROKEN_PIPE);
  throw error;
}
