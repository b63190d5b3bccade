import { runInSession } from "./session.ts";

/** One step of a walkthrough: announced, run as the user would type it, its output shown. */
export interface Step {
  /** For the announcement and the summary. */
  title: string;
  /** Exactly what the user would type (bash). Variables a step `export`s reach the later steps. */
  command: string;
  /** One line on what the step shows, printed under the title. */
  note?: string;
  /** Where to look when it fails. */
  lookAt?: string;
  /**
   * Run the command again every `everyMs` until its exit code is `exitCode`, or its stdout
   * matches `output` (watching something change); each new output is shown once.
   */
  until?: { exitCode?: number; output?: RegExp; everyMs?: number; timeoutMs?: number; describe: string };
  /** A check on the result beyond the exit code: a reason to fail, or undefined. */
  check?: (result: { stdout: string; stderr: string }) => string | undefined;
  timeoutMs?: number;
}

/** A step in one line: `step("Check the providers", "nvkectl get providers")`. */
export const step = (title: string, command: string, more: Omit<Step, "title" | "command"> = {}): Step => ({
  title,
  command,
  ...more,
});

export interface StepResult {
  title: string;
  command: string;
  ok: boolean;
  ms: number;
  exitCode: number | null;
  /** Why it failed, for people. */
  failure?: string;
}

interface WalkthroughIO {
  /** The walkthrough's own stdout: announcements, the commands' output, the summary. */
  out(text: string): void;
  /** ANSI colours (a TTY and no NO_COLOR). */
  color: boolean;
  now(): number;
}

export interface WalkthroughOptions {
  /** Where the commands run (the checkout: they name examples/…). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** A file the steps' exported variables are kept in between steps. */
  stateFile: string;
  io: WalkthroughIO;
  /** Aborting stops the running step (and what it started) and the walkthrough. */
  signal?: AbortSignal;
}

const paint = (on: boolean, code: string, text: string) => (on ? `\u001b[${code}m${text}\u001b[0m` : text);

/** The output with kubectl-style ages at line ends (`5s`, `3m20s`, `2d3h`) blanked. */
export const withoutAges = (text: string) => text.replace(/\b\d+[smhd](\d+[smh])?$/gm, "");

const session = (options: WalkthroughOptions, timeoutMs: number) => ({
  cwd: options.cwd,
  env: options.env,
  stateFile: options.stateFile,
  timeoutMs,
  ...(options.signal === undefined ? {} : { signal: options.signal }),
});

async function runStep(
  current: Step,
  options: WalkthroughOptions,
): Promise<Omit<StepResult, "title" | "command" | "ms">> {
  const timeoutMs = current.timeoutMs ?? 120_000;
  const { until } = current;
  if (until === undefined) {
    const run = await runInSession(current.command, { ...session(options, timeoutMs), onOutput: options.io.out });
    if (run.timedOut)
      return { ok: false, exitCode: run.exitCode, failure: `it did not finish within ${timeoutMs / 1000} s` };
    if (run.exitCode !== 0)
      return { ok: false, exitCode: run.exitCode, failure: `it exited with code ${run.exitCode}` };
    const reason = current.check?.(run);
    return reason === undefined ? { ok: true, exitCode: 0 } : { ok: false, exitCode: 0, failure: reason };
  }
  const deadline = options.io.now() + (until.timeoutMs ?? 60_000);
  let last = "";
  for (;;) {
    const run = await runInSession(current.command, session(options, timeoutMs));
    const gone = until.exitCode !== undefined && run.exitCode === until.exitCode;
    if (gone) {
      options.io.out(`→ exit code ${run.exitCode}: ${until.describe}\n`);
      return { ok: true, exitCode: run.exitCode };
    }
    const shown = run.stdout + run.stderr;
    // An AGE column ticks every second: only a change in anything else is news.
    const news = withoutAges(shown);
    if (news !== last) options.io.out(shown);
    last = news;
    if (until.output !== undefined && run.exitCode === 0 && until.output.test(run.stdout)) {
      return { ok: true, exitCode: run.exitCode };
    }
    const expected = until.exitCode === undefined || run.exitCode === 0 || run.exitCode === until.exitCode;
    if (!expected) return { ok: false, exitCode: run.exitCode, failure: `it exited with code ${run.exitCode}` };
    if (options.io.now() > deadline) {
      return {
        ok: false,
        exitCode: run.exitCode,
        failure: `${until.describe} did not happen within ${(until.timeoutMs ?? 60_000) / 1000} s`,
      };
    }
    if (options.signal?.aborted) return { ok: false, exitCode: run.exitCode, failure: "interrupted" };
    await new Promise((resolve) => setTimeout(resolve, until.everyMs ?? 1_000));
  }
}

/** Runs the steps in order; stops at the first that fails, saying which and what to look at. */
export async function runWalkthrough(steps: readonly Step[], options: WalkthroughOptions): Promise<StepResult[]> {
  const { io } = options;
  const results: StepResult[] = [];
  for (const [index, current] of steps.entries()) {
    if (options.signal?.aborted) break;
    io.out(`\n${paint(io.color, "1;36", `── ${index + 1}/${steps.length} ${current.title}`)}\n`);
    if (current.note) io.out(`${paint(io.color, "2", current.note)}\n`);
    for (const line of current.command.split("\n")) io.out(`${paint(io.color, "1", `$ ${line}`)}\n`);
    if (current.until)
      io.out(
        `${paint(io.color, "2", `(again every ${(current.until.everyMs ?? 1000) / 1000} s, shown when it changes, until ${current.until.describe})`)}\n`,
      );
    const started = io.now();
    const outcome = await runStep(current, options);
    const result: StepResult = { title: current.title, command: current.command, ms: io.now() - started, ...outcome };
    results.push(result);
    if (!result.ok) {
      io.out(
        [
          "",
          paint(io.color, "1;31", `✗ step ${index + 1}/${steps.length} "${current.title}" failed: ${result.failure}`),
          `  command: ${current.command}`,
          ...(current.lookAt ? [`  look at: ${current.lookAt}`] : []),
          "",
        ].join("\n"),
      );
      break;
    }
  }
  return results;
}

/** The closing summary: each step, how long it took, and how it ended. */
export function summary(results: readonly StepResult[], total: number, color: boolean): string {
  const width = Math.max(...results.map((r) => r.title.length));
  const lines = results.map((r, i) => {
    const mark = r.ok ? paint(color, "32", "✓") : paint(color, "31", "✗");
    return `  ${mark} ${String(i + 1).padStart(2)}  ${r.title.padEnd(width)}  ${(r.ms / 1000).toFixed(1).padStart(5)} s`;
  });
  const ok = results.every((r) => r.ok);
  const seconds = (results.reduce((sum, r) => sum + r.ms, 0) / 1000).toFixed(1);
  const head = ok
    ? `Walkthrough done: ${results.length} of ${total} steps in ${seconds} s.`
    : `Walkthrough stopped at step ${results.length} of ${total} (${seconds} s).`;
  return `\n${paint(color, "1", head)}\n${lines.join("\n")}\n`;
}
