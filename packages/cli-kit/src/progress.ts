import { escapeControl } from "@nodekit/errors";
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

/** Feeds a plan run's events to a progress renderer: one entry per item. */
export function planProgress(renderer: ProgressRenderer): (event: PlanEvent) => void {
  return (event) => {
    switch (event.type) {
      case "item-started":
        renderer.update({ key: event.item.id, title: event.item.title, state: "running" });
        break;
      case "step-started":
        renderer.update({ key: event.item.id, title: event.item.title, state: "running", detail: event.line });
        break;
      case "item-finished":
        renderer.update({ key: event.item.id, title: event.item.title, state: "done", ms: event.ms });
        break;
      case "item-failed":
        renderer.update({ key: event.item.id, title: event.item.title, state: "failed", detail: event.message });
        break;
      case "item-skipped":
        renderer.update({ key: event.item.id, title: event.item.title, state: "skipped", detail: event.reason });
        break;
      default:
        break;
    }
  };
}
