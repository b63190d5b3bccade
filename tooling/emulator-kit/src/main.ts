import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { parentsNow, untilStopped } from "@nodekit/testenv/supervisor";

/** A command line the emulator cannot run with: exit 2, with the usage. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The parsed command line. */
export interface Flags {
  string(name: string): string | undefined;
  boolean(name: string): boolean;
  /** A flag listed in `numbers`: a whole number ≥ 0 (checked before `start`). */
  number(name: string): number | undefined;
}

export interface RunningEmulatorProcess {
  /** Printed as one line on stdout once it listens. */
  url: string;
  /** Stops serving and writes the state. */
  stop(): Promise<void>;
}

export interface EmulatorMainOptions {
  /** Each line on stderr starts with it: `noderings-emulator: …`. */
  name: string;
  usage: string;
  /** node:util parseArgs options (`--help` is added). */
  options: NonNullable<ParseArgsConfig["options"]>;
  /** Flags whose value must be a whole number ≥ 0. */
  numbers?: readonly string[];
  /** Starts the emulator; throws {@link UsageError} for a bad combination of flags. */
  start(flags: Flags, log: (line: string) => void): Promise<RunningEmulatorProcess>;
  /** The exit code of a start that failed otherwise (default 1). */
  exitCodeOf?(error: unknown): number;
}

/**
 * The `main` of an emulator's process (`pnpm emulator:…`), one process in the foreground:
 * prints its base URL as one line on stdout once it listens and logs to stderr; stops, writing
 * its state, on SIGINT, SIGTERM or SIGHUP, and when whoever started it is gone (a kill -9 of a
 * wrapper included: it never outlives it). Bad flags exit 2.
 *
 * The workspace packages resolve to their TypeScript sources only under the "source"
 * condition; started without it, the script runs itself again as a child that has it (the
 * IPC channel between them closes however this process dies, and the child stops then).
 */
export async function runEmulatorMain(mainUrl: string, options: EmulatorMainOptions): Promise<void> {
  if (!process.execArgv.some((arg) => arg === "--conditions=source" || arg === "-C=source")) {
    return runUnderSourceCondition(fileURLToPath(mainUrl));
  }
  // Before anything that waits: a wrapper killed while the emulator starts is still seen gone.
  const parents = parentsNow();
  const log = (line: string) => process.stderr.write(`${options.name}: ${line}\n`);
  const usage = (message: string) => {
    process.stderr.write(`${options.name}: ${message}\n${options.usage}\n`);
    return 2;
  };
  process.exitCode = await (async (): Promise<number> => {
    let flags: Flags;
    try {
      flags = parseFlags(options);
    } catch (error) {
      return usage((error as Error).message);
    }
    if (flags.boolean("help")) {
      process.stdout.write(`${options.usage}\n`);
      return 0;
    }
    let emulator: RunningEmulatorProcess;
    try {
      emulator = await options.start(flags, log);
    } catch (error) {
      if (error instanceof UsageError) return usage(error.message);
      log(`error: ${(error as Error).message}`);
      return options.exitCodeOf?.(error) ?? 1;
    }
    process.stdout.write(`${emulator.url}\n`);
    const why = await untilStopped({ watchParents: parents });
    log(`stopping: ${why}`);
    await emulator.stop();
    log("stopped; state written");
    return 0;
  })();
  // Whatever the emulator's clients left open (a keep-alive socket to the site cluster) must not keep it running.
  process.exit();
}

/**
 * The lines of a file a flag names (`--tokens-file`, `--admin-token-file`): trimmed, without
 * blank lines and `#` comments. A file that cannot be read says so, naming the flag.
 */
export async function readTokenLines(path: string, flag: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new Error(`cannot read ${flag} ${path}: ${(error as Error).message}`);
  }
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  if (lines.length === 0) throw new Error(`${flag} ${path} holds no token`);
  return lines;
}

function parseFlags(options: EmulatorMainOptions): Flags {
  const values: Record<string, string | boolean | Array<string | boolean> | undefined> = parseArgs({
    options: { ...options.options, help: { type: "boolean", short: "h" } },
    strict: true,
    allowPositionals: false,
  }).values;
  const numbers = new Map<string, number>();
  for (const flag of options.numbers ?? []) {
    const text = values[flag];
    if (typeof text !== "string") continue;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0 || text.trim() === "") {
      throw new Error(`--${flag} must be a whole number; got "${text}"`);
    }
    numbers.set(flag, n);
  }
  return {
    string: (name) => {
      const value = values[name];
      return typeof value === "string" ? value : undefined;
    },
    boolean: (name) => values[name] === true,
    number: (name) => numbers.get(name),
  };
}

/**
 * This script again, as a child with the "source" condition, passing on the signals; it
 * stops the child when whoever started this process is gone, and exits with its exit code.
 */
function runUnderSourceCondition(script: string): void {
  const child = spawn(
    process.execPath,
    ["--conditions=source", ...process.execArgv, script, ...process.argv.slice(2)],
    { stdio: ["inherit", "inherit", "inherit", "ipc"] },
  );
  void untilStopped({ watchParents: true }).then(() => child.kill("SIGTERM"));
  child.on("exit", (code, signal) => {
    process.exit(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0)));
  });
}
