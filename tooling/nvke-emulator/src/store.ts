import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { decodeUtf8, readYamlDocuments, validateDocument } from "@nodekit/documents";
import { formatProblem, type Problem } from "@nodekit/errors";
import { writeFileSafe } from "@nodekit/fs-safe";
import { type EmulatorState, emptyState } from "./state.ts";
import { EmulatorStateSchema } from "./state-schema.ts";

/** The problems shown when a state file is refused; the rest are counted. */
const SHOWN_PROBLEMS = 20;

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

  /**
   * Reads and checks the state file; a missing one is an empty state. A file that is not
   * JSON, or not of the state's shape, throws an error listing its problems with their
   * lines and field paths (and starts nothing).
   */
  static async open(path: string): Promise<StateStore> {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return new StateStore(path, emptyState());
      throw error;
    }
    return new StateStore(path, parseState(bytes, path));
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
      await writeFileSafe(this.path, JSON.stringify(this.state), { mode: 0o600, what: "the state file" });
    } finally {
      if (this.running === self) this.running = undefined;
    }
  }
}

/** The state in `bytes` (the file at `path`), or an error naming every problem with its line. */
export function parseState(bytes: Uint8Array, path: string): EmulatorState {
  const refuse = (problems: readonly Problem[]) => {
    const lines = problems.slice(0, SHOWN_PROBLEMS).map((problem) => `  ${formatProblem(problem)}`);
    if (problems.length > SHOWN_PROBLEMS) lines.push(`  … and ${problems.length - SHOWN_PROBLEMS} more`);
    const noun = problems.length === 1 ? "problem" : "problems";
    return new Error(
      `state file ${path} is not an NVKE emulator state file (version 1): ${problems.length} ${noun}; move it aside to start empty\n${lines.join("\n")}`,
    );
  };
  const decoded = decodeUtf8(bytes, { source: path });
  if (decoded.text === undefined) throw refuse(decoded.problems);
  // JSON is YAML: read this way, every problem knows its line.
  const read = readYamlDocuments(decoded.text, {
    source: path,
    language: "JSON",
    maxDocuments: 1,
    maxLength: Number.POSITIVE_INFINITY,
  });
  if (read.problems.length > 0) throw refuse(read.problems);
  const [document] = read.documents;
  if (document === undefined) throw refuse([{ severity: "error", source: path, message: "is empty" }]);
  const { problems } = validateDocument(EmulatorStateSchema, document, { source: path });
  if (problems.length > 0) throw refuse(problems);
  return document.value as EmulatorState;
}
