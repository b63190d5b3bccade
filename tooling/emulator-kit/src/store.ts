import { mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { decodeUtf8, readYamlDocuments, validateDocument } from "@nodekit/documents";
import { formatProblem, type Problem } from "@nodekit/errors";
import { writeFileSafe } from "@nodekit/fs-safe";
import type * as z from "zod";

/** The problems a refused state file's message shows; the rest are counted. */
const SHOWN_PROBLEMS = 20;

/** A state file an emulator refuses to start with: every problem, located. */
export class StateFileError extends Error {
  override readonly name = "StateFileError";
  readonly problems: readonly Problem[];

  /** `what`: the file it should be, e.g. "a NodeRings emulator state file (version 1)". */
  constructor(path: string, what: string, problems: readonly Problem[]) {
    const lines = problems.slice(0, SHOWN_PROBLEMS).map((problem) => `  ${formatProblem(problem)}`);
    if (problems.length > SHOWN_PROBLEMS) lines.push(`  … and ${problems.length - SHOWN_PROBLEMS} more`);
    const noun = problems.length === 1 ? "problem" : "problems";
    super(
      `state file ${path} is not ${what}: ${problems.length} ${noun}; move it aside to start empty\n${lines.join("\n")}`,
    );
    this.problems = problems;
  }
}

export interface StateFileFormat<State> {
  /** The state's schema: the file is checked against it in full at start. */
  schema: z.ZodType;
  /** The file it should be, for the refusal: "an NVKE emulator state file (version 1)". */
  what: string;
  /** How a syntax error names the file's language ("JSON", or "YAML" — JSON is YAML). Default "YAML". */
  language?: string;
  /** The state when there is no file yet. */
  empty(): State;
}

/**
 * The state in `bytes` (the file at `path`), or a {@link StateFileError} naming every
 * problem with its line and field path. Read as YAML (JSON is YAML), so that each problem
 * knows its line; no size limit: a state of 50,000 clusters is tens of megabytes.
 */
export function parseStateFile<State>(bytes: Uint8Array, path: string, format: StateFileFormat<State>): State {
  const refuse = (problems: readonly Problem[]) => new StateFileError(path, format.what, problems);
  const decoded = decodeUtf8(bytes, { source: path });
  if (decoded.text === undefined) throw refuse(decoded.problems);
  const read = readYamlDocuments(decoded.text, {
    source: path,
    fileKind: "a state file",
    ...(format.language === undefined ? {} : { language: format.language }),
    maxDocuments: 1,
    maxLength: Number.POSITIVE_INFINITY,
  });
  if (read.problems.length > 0) throw refuse(read.problems);
  const [document] = read.documents;
  if (document === undefined || document.value === null) {
    throw refuse([{ severity: "error", source: path, message: "is empty" }]);
  }
  const { problems } = validateDocument(format.schema, document, { source: path });
  if (problems.length > 0) throw refuse(problems);
  return document.value as State;
}

/**
 * An emulator's state file: read and checked in full once, at start (a missing file is an
 * empty state), then written after every change — atomically (aside, then renamed over;
 * mode 0600, never through a link) — so that what a client was told survives a restart, a
 * kill -9 included. Writes are coalesced: callers that ask while a write runs share the next
 * one, so a burst of requests costs two writes, not one each.
 */
export class StateStore<State> {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  readonly path: string;
  readonly state: State;

  private constructor(path: string, state: State) {
    this.path = path;
    this.state = state;
  }

  /**
   * Reads and checks the state file (a bad one throws {@link StateFileError}, and nothing
   * starts), then writes it back once: a directory it cannot write fails now, not on the
   * first request, and what a writer killed mid-write left beside it is removed.
   */
  static async open<State>(path: string, format: StateFileFormat<State>): Promise<StateStore<State>> {
    let state: State;
    try {
      state = parseStateFile(await readFile(path), path, format);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      state = format.empty();
    }
    const store = new StateStore(path, state);
    await store.persist();
    return store;
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
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      // writeFileSafe also removes the temporary files of a writer that was killed.
      await writeFileSafe(this.path, `${JSON.stringify(this.state)}\n`, { mode: 0o600, what: "the state file" });
    } finally {
      if (this.running === self) this.running = undefined;
    }
  }
}
