import { parseDuration, runProgress } from "@nodekit/cli-kit";
import { breakStaleLock, type PhaseEvent } from "@nodekit/phase-runner";
import type { ProcessRunner, Redactor } from "@nodekit/process";
import type { Command } from "@oclif/core/command";
import { NrCommand } from "./base.ts";
import { assertNrHome, nrLockPath, nrPaths } from "./services/home.ts";
import { pathAdvice } from "./services/register.ts";
import { runLog } from "./services/run-log.ts";

/** What a register, reset or upgrade run takes from its command. */
export interface RunParts {
  env: NodeJS.ProcessEnv;
  runner: ProcessRunner;
  redactor: Redactor;
  version: string;
  onEvent: (event: PhaseEvent) => void;
  warn: (message: string) => void;
  debug: (message: string) => void;
  signal: AbortSignal;
  onInstalled: (tool: string) => void;
}

/** --timeout, --poll-interval, --api-timeout and --host-root as register and upgrade take them. */
export function waits(flags: {
  timeout: string;
  "poll-interval": string;
  "api-timeout": string;
  "host-root"?: string;
}) {
  return {
    waitSeconds: Math.ceil(parseDuration(flags.timeout, "--timeout") / 1000),
    pollMs: parseDuration(flags["poll-interval"], "--poll-interval"),
    apiTimeoutMs: parseDuration(flags["api-timeout"], "--api-timeout"),
    hostRoot: flags["host-root"],
  };
}

/** nr's commands that run phases under the machine's lock: register, reset, upgrade. */
export abstract class PhaseCommand<T extends typeof Command> extends NrCommand<T> {
  /** --break-lock: clears a lock left by a run that is no longer running (never one a live run holds). */
  protected async breakLock(): Promise<void> {
    const paths = nrPaths(process.env);
    await assertNrHome(paths);
    const cleared = await breakStaleLock(paths.state, { path: nrLockPath(process.env) });
    if (cleared !== undefined)
      this.logger.warn(`cleared a stale lock (${cleared.state === "stale" ? cleared.why : ""})`);
  }

  /**
   * Runs `body` with the RunParts of this command: when `running` (not a plan or a dry run),
   * progress on stderr and the run's log for nr cluster support-bundle (redacted); the stop on
   * SIGINT and SIGTERM. `body` calls `done` once the run is over, before it prints. A failure
   * closes the progress and is thrown as `advise` words it; whatever happens, a tool nr put
   * into ~/.nr/bin is named with how to keep it on PATH (NR-5).
   */
  protected async withRun(
    running: boolean,
    advise: (error: unknown) => unknown,
    body: (parts: RunParts, done: () => void) => Promise<void>,
  ): Promise<void> {
    const env = process.env;
    const renderer = running ? await this.progress() : undefined;
    const progress = renderer === undefined ? undefined : runProgress(renderer);
    const log = running ? runLog(nrPaths(env), this.redactor) : undefined;
    const stopping = this.stopOnSignals();
    const installedTools: string[] = [];
    try {
      await body(
        {
          env,
          runner: this.processRunner(),
          redactor: this.redactor,
          version: this.config.version,
          onEvent: (event) => {
            log?.(event);
            progress?.(event);
          },
          warn: (message) => this.logger.warn(message),
          debug: (message) => this.logger.debug(message),
          signal: stopping.signal,
          onInstalled: (tool) => installedTools.push(tool),
        },
        () => renderer?.close(),
      );
    } catch (error) {
      renderer?.close();
      throw advise(error);
    } finally {
      stopping.release();
      if (installedTools.length > 0) this.logger.info(pathAdvice(env));
    }
  }
}
