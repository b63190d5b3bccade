import { escapeControl } from "@nodekit/errors";
import type { PhaseEvent } from "@nodekit/phase-runner";
import type { PlanEvent } from "@nodekit/plan";
import type { Logger } from "./logger.ts";

// node:util through process.getBuiltinModule, not `import … from "node:util"`: an ES import of
// a built-in reads every export, and node:util's load worker_threads, its diff and parseArgs
// (a dozen of Node's modules, a few ms of every command; the start-up guard checks it).
const { styleText } = process.getBuiltinModule("node:util");

export type ProgressState = "running" | "done" | "failed" | "skipped";

/** One entry of a run's progress (an item of a plan, a phase of a registration) changing state. */
export interface ProgressUpdate {
  key: string;
  title: string;
  state: ProgressState;
  /** What failed, why it was skipped, or the call running now. */
  detail?: string | undefined;
  ms?: number | undefined;
}

export interface ProgressRenderer {
  update(update: ProgressUpdate): void;
  /** Ends the live list (leaving it on screen); later output goes below it. */
  close(): void;
}

export interface ProgressOptions {
  stream?: NodeJS.WriteStream | (NodeJS.WritableStream & { isTTY?: boolean; columns?: number });
  /** --json-logs: each update is a log record (NDJSON) through the logger. */
  json?: boolean;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

const seconds = (ms: number | undefined) => (ms === undefined ? "" : ` (${(ms / 1000).toFixed(1)}s)`);

/**
 * Progress on stderr, for people and for machines: a live list redrawn in place on a TTY,
 * one plain `[key] …` line per change otherwise (CI logs, `2>file`), and NDJSON records with
 * --json-logs. Results never go here; they go to stdout.
 */
export async function createProgressRenderer(options: ProgressOptions): Promise<ProgressRenderer> {
  const stream = options.stream ?? process.stderr;
  const env = options.env ?? process.env;
  if (options.json) {
    return {
      update: (u) =>
        options.logger.info(`${u.key}: ${u.state}`, {
          event: "progress",
          key: u.key,
          title: u.title,
          state: u.state,
          ...(u.detail === undefined ? {} : { detail: u.detail }),
          ...(u.ms === undefined ? {} : { ms: Math.round(u.ms) }),
        }),
      close: () => {},
    };
  }
  if (!stream.isTTY || env.TERM === "dumb" || env.CI) {
    const last = new Map<string, ProgressState>();
    return {
      update(u) {
        // One line per change of state: the calls an item runs are logged under -v already.
        if (last.get(u.key) === u.state) return;
        last.set(u.key, u.state);
        const text =
          u.state === "running"
            ? `[${u.key}] ${u.title}`
            : u.state === "done"
              ? `[${u.key}] done${seconds(u.ms)}`
              : u.state === "failed"
                ? `[${u.key}] failed${u.detail ? `: ${u.detail}` : ""}`
                : `[${u.key}] skipped${u.detail ? `: ${u.detail}` : ""}`;
        options.logger.info(text);
      },
      close: () => {},
    };
  }
  const { createLogUpdate } = await import("log-update");
  const draw = createLogUpdate(stream as NodeJS.WriteStream);
  const color = !env.NO_COLOR;
  const paint = (style: Parameters<typeof styleText>[0], text: string) =>
    color ? styleText(style, text, { validateStream: false }) : text;
  const entries = new Map<string, ProgressUpdate & { since: number }>();
  const render = () => {
    const lines = [...entries.values()].map((u) => {
      const mark =
        u.state === "running"
          ? paint("cyan", "…")
          : u.state === "done"
            ? paint("green", "✓")
            : u.state === "failed"
              ? paint("red", "✗")
              : paint("dim", "-");
      const elapsed = u.state === "running" ? seconds(Date.now() - u.since) : seconds(u.ms);
      const detail = u.detail && u.state !== "done" ? paint("dim", `  ${escapeControl(u.detail)}`) : "";
      return `${mark} ${escapeControl(u.key)}  ${escapeControl(u.title)}${paint("dim", elapsed)}${detail}`;
    });
    draw(lines.join("\n"));
  };
  const timer = setInterval(render, 1000);
  timer.unref();
  return {
    update(u) {
      const earlier = entries.get(u.key);
      const since = u.state === "running" && earlier?.state !== "running" ? Date.now() : (earlier?.since ?? Date.now());
      entries.set(u.key, { ...u, since });
      render();
    },
    close() {
      clearInterval(timer);
      render();
      draw.done();
    },
  };
}

/** A run's events, as a progress renderer shows them: a plan's items (`runPlan`) or a phase runner's phases (`runPhases`). */
export type ProgressEvent = PlanEvent | PhaseEvent;

const AGAIN: Readonly<Record<string, string>> = {
  "failed-before": "again: it failed last time",
  "inputs-changed": "again: its inputs changed",
  "probe-failed": "again: its work is no longer in place",
  "after-earlier-rerun": "again: an earlier phase ran again",
};

/** One event as a change of its entry (the plan item or phase, keyed by its id), or undefined for the run's own. */
function progressUpdate(event: ProgressEvent): ProgressUpdate | undefined {
  const unit = "phase" in event ? event.phase : "item" in event ? event.item : undefined;
  if (unit === undefined) return undefined;
  const entry = { key: unit.id, title: unit.title };
  switch (event.type) {
    case "item-started":
      return { ...entry, state: "running" };
    case "phase-started": {
      const again = AGAIN[event.reason];
      const why = again === undefined ? "" : ` (${again}${event.detail ? `: ${event.detail}` : ""})`;
      return { ...entry, title: `${unit.title}${why}`, state: "running" };
    }
    case "step-started":
      return { ...entry, state: "running", detail: event.line };
    case "phase-progress":
      return { ...entry, state: "running", detail: event.detail };
    case "item-finished":
    case "phase-finished":
      return { ...entry, state: "done", ms: event.ms };
    case "item-failed":
    case "phase-failed":
      return { ...entry, state: "failed", detail: event.message };
    case "item-skipped":
    case "phase-skipped":
      return { ...entry, state: "skipped", detail: event.reason };
    case "phase-kept": {
      const done = `done${event.finishedAt ? ` at ${event.finishedAt}` : ""}`;
      const detail =
        event.basis === "unchanged" ? `${done}, still in place: kept` : `${done}, kept: ${event.reason ?? ""}`;
      return { ...entry, state: "skipped", detail };
    }
    default:
      return undefined;
  }
}

/**
 * Feeds a run's events to a progress renderer — a plan's (`runPlan`) or a phase runner's
 * (`runPhases`): one entry per item or phase, keyed by its id (a live list on a TTY,
 * `[id] …` lines otherwise, NDJSON with --json-logs).
 */
export function runProgress(renderer: ProgressRenderer): (event: ProgressEvent) => void {
  return (event) => {
    const update = progressUpdate(event);
    if (update !== undefined) renderer.update(update);
  };
}
