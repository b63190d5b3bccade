import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { type EmulatorState, emptyState } from "./state.ts";

/**
 * The emulator's state file: read once at start, written atomically (write aside, then
 * rename) after every change. Writes are coalesced: callers that ask while a write is
 * running share the next one, so a burst of requests costs two writes, not one each.
 */
export class StateStore {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  readonly path: string;
  readonly state: EmulatorState;

  constructor(path: string, state: EmulatorState) {
    this.path = path;
    this.state = state;
  }

  static async open(path: string): Promise<StateStore> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return new StateStore(path, emptyState());
      throw error;
    }
    let state: EmulatorState;
    try {
      state = JSON.parse(text) as EmulatorState;
    } catch (error) {
      throw new Error(
        `state file ${path} is not valid JSON (${(error as Error).message}); move it aside to start empty`,
      );
    }
    if (state?.version !== 1 || typeof state.clusters !== "object") {
      throw new Error(
        `state file ${path} is not an NVKE emulator state file (version 1); move it aside to start empty`,
      );
    }
    return new StateStore(path, { ...emptyState(), ...state });
  }

  /** Resolves once a write that started after this call has finished. */
  persist(): Promise<void> {
    if (this.queued !== undefined) return this.queued;
    const previous = this.running;
    const next: Promise<void> =
      previous === undefined
        ? Promise.resolve().then(() => this.write(next))
        : previous.catch(() => {}).then(() => this.write(next));
    this.queued = next;
    return next;
  }

  private async write(self: Promise<void>): Promise<void> {
    this.queued = undefined;
    this.running = self;
    try {
      await mkdir(dirname(this.path), { recursive: true });
      await writeFileAtomic(this.path, JSON.stringify(this.state), { mode: 0o600 });
    } finally {
      if (this.running === self) this.running = undefined;
    }
  }
}
