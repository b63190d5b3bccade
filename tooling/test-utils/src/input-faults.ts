import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";

// The fault tier of issue 22 ("done when"): inputs no reader may take whole — an endless
// device, a FIFO whose writer never stops, a 64 GiB file, an endless standard input — run
// through the built CLIs, each run's exit code, time and peak RSS kept for the report.

/** An input a reader is given in place of a file. `open` makes it for one run; `close` undoes it. */
export interface FaultInput {
  name: string;
  open(dir: string): Promise<{ path: string; close(): void }>;
}

const noop = () => {};

/** Endless zeros, endless random bytes, a FIFO fed for ever and never closed, a 64 GiB sparse file. */
export const FILE_FAULTS: readonly FaultInput[] = [
  { name: "/dev/zero", open: async () => ({ path: "/dev/zero", close: noop }) },
  { name: "/dev/urandom", open: async () => ({ path: "/dev/urandom", close: noop }) },
  {
    name: "a FIFO fed for ever, never closed",
    open: async (dir) => {
      const path = join(dir, `fifo-${process.hrtime.bigint()}`);
      if (spawnSync("mkfifo", [path]).status !== 0) throw new Error(`mkfifo ${path} failed`);
      // `yes` writes until the reader closes its end; killed here in any case.
      const writer = spawn("sh", ["-c", 'exec yes "name,ip,10.0.0.1" > "$1"', "sh", path], { stdio: "ignore" });
      return {
        path,
        close: () => {
          writer.kill("SIGKILL");
          void rm(path, { force: true });
        },
      };
    },
  },
  {
    name: "a 64 GiB file",
    open: async (dir) => {
      const path = join(dir, `huge-${process.hrtime.bigint()}`);
      const handle = await open(path, "w", 0o600);
      await handle.truncate(64 * 1024 ** 3);
      await handle.close();
      return { path, close: () => void rm(path, { force: true }) };
    },
  },
];

/**
 * What a CLI's standard input is: endless zeros (a device), a pipe fed for ever
 * (`yes | cli`), or a pipe nobody writes to and nobody closes (a reader waits, as cat does).
 */
export type StdinFault = "/dev/zero" | "an endless pipe" | "a silent pipe";
export const STDIN_FAULTS: readonly StdinFault[] = ["/dev/zero", "an endless pipe"];

export interface BoundedRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  ms: number;
  /** The child's peak resident set, in MiB (its own maxRSS, written as it exits); undefined when it did not exit itself. */
  peakRssMb: number | undefined;
}

export interface BoundedRunOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  /** A directory of the test's own, for the RSS hook and its answer. */
  dir: string;
  stdin?: StdinFault;
  /** Killed (SIGKILL) past this: a run that hangs ends as a failure, not a stuck test. */
  timeoutMs?: number;
  /** Sent after this many ms (a Ctrl-C), to check that a run waiting on its input can be stopped. */
  interruptAfterMs?: number;
}

let runs = 0;

/**
 * Runs a built CLI (`apps/<cli>/bin/run.js`) once, measuring its wall time and, through a
 * Node --import hook, its own peak RSS (`process.resourceUsage().maxRSS` at exit).
 */
export async function runBounded(bin: string, args: string[], options: BoundedRunOptions): Promise<BoundedRun> {
  runs += 1;
  const hook = join(options.dir, "max-rss.mjs");
  const rssFile = join(options.dir, `max-rss-${process.pid}-${runs}.txt`);
  writeFileSync(
    hook,
    'import { writeFileSync } from "node:fs";\nprocess.on("exit", () => { if (process.env.NODEKIT_RSS_FILE) writeFileSync(process.env.NODEKIT_RSS_FILE, String(process.resourceUsage().maxRSS)); });\n',
  );
  const env: Record<string, string> = { NO_COLOR: "1", NODE_OPTIONS: `--import=${hook}`, NODEKIT_RSS_FILE: rssFile };
  for (const [key, value] of Object.entries(options.env)) if (value !== undefined) env[key] = value;
  let stdinFd: number | undefined;
  let feeder: ChildProcess | undefined;
  let stdin: "ignore" | "pipe" | number = "ignore";
  if (options.stdin === "/dev/zero") {
    stdinFd = openSync("/dev/zero", "r");
    stdin = stdinFd;
  } else if (options.stdin === "a silent pipe") {
    stdin = "pipe";
  } else if (options.stdin === "an endless pipe") {
    feeder = spawn("yes", ["name: endless"], { stdio: ["ignore", "pipe", "ignore"] });
    stdin = "pipe";
  }
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], { cwd: options.cwd, env, stdio: [stdin, "ignore", "pipe"] });
  if (feeder?.stdout && child.stdin) {
    feeder.stdout.pipe(child.stdin);
    child.stdin.on("error", noop); // EPIPE once the CLI stops reading: what it should do.
  }
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    if (stderr.length < 64 * 1024) stderr += chunk;
  });
  const kill = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  const interrupt =
    options.interruptAfterMs === undefined
      ? undefined
      : setTimeout(() => child.kill("SIGINT"), options.interruptAfterMs);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on("close", (code, sig) => resolve([code, sig])),
  );
  const ms = performance.now() - started;
  clearTimeout(kill);
  if (interrupt !== undefined) clearTimeout(interrupt);
  feeder?.kill("SIGKILL");
  if (stdinFd !== undefined) closeSync(stdinFd);
  let peakRssMb: number | undefined;
  try {
    peakRssMb = Number(readFileSync(rssFile, "utf8")) / 1024;
  } catch {
    peakRssMb = undefined;
  }
  await rm(rssFile, { force: true });
  return { exitCode, signal, stderr, ms, peakRssMb };
}

/** The counts and worst figures of a set of runs, for the report. */
export function summarize(results: readonly BoundedRun[]): { runs: number; peakRssMb: number; longestMs: number } {
  return {
    runs: results.length,
    peakRssMb: Math.round(Math.max(0, ...results.map((r) => r.peakRssMb ?? 0)) * 10) / 10,
    longestMs: Math.round(Math.max(0, ...results.map((r) => r.ms))),
  };
}

/** What no run of a fault tier may pass: the limit is 8 MiB, a start of a CLI about 100 MB. */
export const FAULT_BOUNDS = { ms: 20_000, rssMb: 250 } as const;

/** The run took less than FAULT_BOUNDS' time and peak RSS; `what` names it in a failure. */
export function expectBounded(run: BoundedRun, what: string): void {
  expect(run.ms, what).toBeLessThan(FAULT_BOUNDS.ms);
  expect(run.peakRssMb, what).toBeLessThan(FAULT_BOUNDS.rssMb);
}
