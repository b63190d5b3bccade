import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { parseYamlWith } from "@nodekit/documents";
import { formatProblem, type Problem } from "@nodekit/errors";
import writeFileAtomic from "write-file-atomic";
import { type EmulatorState, emptyState, StateFileSchema } from "./state.ts";

/** A state file the emulator refuses to start with: every problem, located. */
export class StateFileError extends Error {
  override readonly name = "StateFileError";
  readonly problems: Problem[];

  constructor(path: string, problems: Problem[]) {
    super(
      `state file ${path} has ${problems.length} ${problems.length === 1 ? "problem" : "problems"}; move it aside to start empty, or fix it:\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`,
    );
    this.problems = problems;
  }
}

/**
 * The emulator's state file: read and validated once at start (a missing file is an empty
 * state), written atomically (write aside, then rename; mode 0600) after every change.
 * Writes are coalesced: callers that ask while a write runs share the next one.
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
    const { value, problems } = parseYamlWith(StateFileSchema, text, { source: path, fileKind: "a state file" });
    if (value === undefined) throw new StateFileError(path, problems);
    return new StateStore(path, value);
  }

  /** Resolves once a write that started after this call has finished. */
  persist(): Promise<void> {
    if (this.queued !== undefined) return this.queued;
    const previous = this.running;
    const next: Promise<void> = (previous === undefined ? Promise.resolve() : previous.catch(() => {})).then(() =>
      this.write(next),
    );
    this.queued = next;
    return next;
  }

  private async write(self: Promise<void>): Promise<void> {
    this.queued = undefined;
    this.running = self;
    try {
      await mkdir(dirname(this.path), { recursive: true });
      await writeFileAtomic(this.path, `${JSON.stringify(this.state, null, 1)}\n`, { mode: 0o600 });
    } finally {
      if (this.running === self) this.running = undefined;
    }
  }
}
