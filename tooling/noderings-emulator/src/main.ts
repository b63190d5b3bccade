#!/usr/bin/env node
// `pnpm emulator:noderings [--port N] [--host H] [--state FILE] [--tokens-file FILE] [--inbound-ms N]`
// One process, in the foreground: prints its base URL as one line on stdout once it is
// ready, logs to stderr, and stops (writing its state) on SIGINT, SIGTERM, or when the
// process that started it goes away. Run with `node --conditions=source` (the root
// script does), so the workspace packages load from their sources.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { StateFileError, startNodeRingsEmulator, type TokenSpec } from "./index.ts";

const USAGE = `usage: pnpm emulator:noderings [--port N] [--host ADDRESS] [--state FILE] [--tokens-file FILE] [--inbound-ms N]`;
const log = (line: string) => process.stderr.write(`noderings-emulator: ${line}\n`);

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: "string" },
        host: { type: "string" },
        state: { type: "string" },
        "tokens-file": { type: "string" },
        "inbound-ms": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return usage((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const number = (flag: string): number | undefined => {
    const text = values[flag] as string | undefined;
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} must be a whole number; got "${text}"`);
    return n;
  };
  let port: number | undefined;
  let inboundMs: number | undefined;
  try {
    port = number("port");
    inboundMs = number("inbound-ms");
  } catch (error) {
    return usage((error as Error).message);
  }
  let tokens: TokenSpec[] | undefined;
  const tokensFile = values["tokens-file"] as string | undefined;
  if (tokensFile !== undefined) {
    try {
      tokens = parseTokens(await readFile(tokensFile, "utf8"));
    } catch (error) {
      log(`error: cannot read --tokens-file ${tokensFile}: ${(error as Error).message}`);
      return 1;
    }
    if (tokens.length === 0) {
      log(`error: --tokens-file ${tokensFile} names no token (one per line: "<token>" or "<account> <token>")`);
      return 1;
    }
  }
  const state = values.state as string | undefined;
  try {
    const emulator = await startNodeRingsEmulator({
      ...(port === undefined ? {} : { port }),
      ...(values.host === undefined ? {} : { host: values.host as string }),
      ...(state === undefined ? {} : { stateFile: resolve(state) }),
      ...(tokens === undefined ? {} : { tokens }),
      ...(inboundMs === undefined ? {} : { timing: { inboundMs } }),
      log,
    });
    log(
      `pid ${process.pid}; state file ${emulator.stateFile}${state === undefined ? " (fresh for this run; --state FILE keeps it)" : ""}`,
    );
    log(
      tokens === undefined
        ? 'accepting the development token (account "default"; see the README)'
        : `accepting ${tokens.length} token(s) from ${tokensFile}`,
    );
    process.stdout.write(`${emulator.url}\n`);
    await untilStopped();
    await emulator.stop();
    log("stopped; state written");
    return 0;
  } catch (error) {
    log(error instanceof StateFileError ? `error: ${error.message}` : `error: ${(error as Error).message}`);
    return error instanceof StateFileError ? 3 : 1;
  }
}

/**
 * Resolves on SIGINT/SIGTERM, or when whoever started it is gone: the emulator never
 * outlives it. `pnpm emulator:noderings` runs it as pnpm → sh -c → node, so a kill -9 of
 * pnpm leaves the shell alive: the watch covers the parent and the grandparent.
 */
function untilStopped(): Promise<void> {
  return new Promise((resolvePromise) => {
    const parent = process.ppid;
    const grandparent = parentOf(parent);
    const watch = setInterval(() => {
      if (process.ppid !== parent || (grandparent !== undefined && grandparent > 1 && !alive(grandparent))) done();
    }, 500);
    const done = () => {
      clearInterval(watch);
      resolvePromise();
    };
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
}

/** A process's state and parent, from /proc (Linux); undefined elsewhere, or when it is gone. */
function statOf(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const [state = "", ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number.isInteger(Number(ppid)) ? { state, ppid: Number(ppid) } : undefined;
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  return statOf(pid)?.ppid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  // A killed process its parent has not reaped yet is a zombie: signal 0 still reaches it.
  return statOf(pid)?.state !== "Z";
}

function parseTokens(text: string): TokenSpec[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [first = "", second] = line.split(/\s+/);
      return second === undefined ? { token: first, account: "default" } : { token: second, account: first };
    });
}

function usage(message: string): number {
  process.stderr.write(`noderings-emulator: ${message}\n${USAGE}\n`);
  return 2;
}

process.exitCode = await main();
