import { writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { codeCacheDir, codeCacheName, enableCompileCacheIn, requireWithCodeCache } from "./code-cache.ts";
import { helpCacheDir, helpCacheKey, keptHelpPage, recordHelpPage } from "./help-cache.ts";
import { helpPage } from "./help-page.ts";
import { planCommand, planEarly, type StartPlan } from "./plan.ts";
import { envPrefix, readShippedCli, readShippedPackage, type ShippedCli, userAgentOf } from "./shipped.ts";

// `--version` loads this module and the launcher's own (plan.ts, argv.ts, shipped.ts) only: each module
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

/**
 * The entry point of the CLIs' bin scripts. It reads the shipped manifest and, when nothing
 * is unusual, runs the command (or its help, or `--version`) without loading oclif's plugin
 * machinery; anything else goes to oclif's full start. Both take global flags anywhere.
 */
export async function run(
  binUrl: string,
  argv: string[] = process.argv.slice(2),
  options: { ownProcess?: boolean } = {},
): Promise<void> {
  traceStartup("run (the bundle's entry loaded)");
  const root = dirname(dirname(fileURLToPath(binUrl)));
  // The package.json first: `--version` needs nothing else (the manifest is ≈ 130 KB of JSON).
  const pkg = readShippedPackage(root);
  const early = pkg === undefined ? undefined : planEarly(pkg, argv, process.env);
  // The launch index plans the start, runs a command and lists a topic's commands; help shows
  // what only the manifest holds (without one, oclif's full start shows it).
  const indexed = early?.kind === "manifest" ? readShippedCli(root, pkg, "index") : undefined;
  const planned: StartPlan =
    early === undefined
      ? { kind: "full", reason: "no package.json" }
      : early.kind !== "manifest"
        ? early
        : indexed === undefined
          ? { kind: "full", reason: "no manifest" }
          : planCommand(indexed, argv, early.plugins);
  // `--version` in the bin's own process: one write to fd 1, without making process.stdout
  // (its stream and Node's stream modules: ≈ 1 ms of the ≈ 3 a `--version` costs past Node's start).
  if (planned.kind === "version" && options.ownProcess === true) {
    traceStartup("planned (version)");
    if (writeOut(`${planned.userAgent}\n`)) return;
  }
  process.stdout.on("error", stopOnBrokenPipe);
  /** Keeps the help page this start renders (launch/help-cache.ts), once it has been rendered. */
  let keep: (() => void) | undefined;
  // Help as oclif rendered it at build time, when this start's would render the same (launch/help-page.ts).
  const subject = planned.kind === "help" ? planned.argv.join(":") : planned.kind === "full" ? planned.help : undefined;
  if (subject !== undefined && indexed !== undefined) {
    const page = helpPage(root, indexed.help, subject, {
      env: process.env,
      argv: process.argv,
      userAgent: userAgentOf(indexed.pjson),
      stdoutIsTTY: process.stdout.isTTY,
    });
    traceStartup(`help page: ${page === undefined ? "none" : "printed"}`);
    if (page !== undefined) {
      process.stdout.write(page);
      return;
    }
    // On a terminal (or another width): the page oclif rendered for an earlier start like this one (launch/help-cache.ts).
    const { build } = indexed.help ?? {};
    const key = build === undefined ? undefined : helpKey(indexed, build, subject);
    const dir = helpCacheDir(indexed.dirname);
    if (build !== undefined && key !== undefined && dir !== undefined) {
      const kept = keptHelpPage(dir, build, key);
      traceStartup(`kept help page: ${kept === undefined ? "none" : "printed"}`);
      if (kept !== undefined) {
        process.stdout.write(kept);
        return;
      }
      keep = recordHelpPage(dir, build, key);
    }
  }
  // Node's compile cache for what loads from here on (`--version` and a help page load nothing more):
  // in the user's own private cache directory only (launch/code-cache.ts), never in Node's default.
  if (pkg !== undefined && planned.kind !== "version") compileCache(codeCacheDir(pkg.dirname));
  const cli = planned.kind === "help" ? readShippedCli(root, pkg) : indexed;
  const plan: StartPlan =
    planned.kind === "help" && cli === undefined ? { kind: "full", reason: "no manifest" } : planned;
  traceStartup(`planned (${plan.kind})`);
  if (plan.kind === "full") {
    const { fullStart } = await import("./full-start.ts");
    await fullStart(binUrl, argv);
    keep?.();
    return;
  }
  if (plan.kind === "version") {
    process.stdout.write(`${plan.userAgent}\n`);
    return;
  }
  if (cli === undefined) throw new Error(`no manifest for a ${plan.kind} plan`);
  if (plan.kind === "topic") {
    const { topicWithoutCommand } = await import("./usage.ts");
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
  const { runFast } = await import("./fast.ts");
  await runFast(cli, plan);
  keep?.();
}

/** The key of the help page of `id` this start would render, when one may be kept. */
function helpKey(cli: ShippedCli, build: string, id: string): string | undefined {
  return helpCacheKey({
    build,
    id,
    userAgent: userAgentOf(cli.pjson),
    prefix: envPrefix(cli.bin),
    cliDirname: cli.dirname,
    theme: cli.pjson.oclif.theme !== undefined,
    env: process.env,
    argv: process.argv,
    columns: () => process.stdout.getWindowSize()[0],
  });
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
 * Writes `text` to fd 1 at once; false when it must go through process.stdout instead (a
 * full non-blocking pipe, or any failure but a closed one, which ends the process as
 * stopOnBrokenPipe does).
 */
function writeOut(text: string): boolean {
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EPIPE") process.exit(BROKEN_PIPE);
    if (written > 0) {
      process.stdout.on("error", stopOnBrokenPipe);
      process.stdout.write(bytes.subarray(written));
      return true;
    }
    return false;
  }
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
