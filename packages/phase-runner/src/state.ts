import { dirname } from "node:path";
import { readYamlDocuments, validateDocument } from "@nodekit/documents";
import { BugError, invalidInput, type Problem, UserError } from "@nodekit/errors";
import { assertTrustedDir, ensurePrivateDir, readPrivateFile, writeFileSafe } from "@nodekit/fs-safe";
import type { JsonValue } from "@nodekit/plan";
import * as z from "zod";
import { errorCodes } from "./errors.ts";
import type { OutputsSchema, PhaseOutputs } from "./phase.ts";

/** The version of the state file; a reader refuses a newer one. */
export const STATE_API_VERSION = "phase-runner.nodekit.dev/v1";

/** State files may record hosts, ids and versions: only their owner reads them. */
const STATE_FILE_MODE = 0o600;
const STATE_DIR_MODE = 0o700;

const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(JsonValueSchema),
    z.record(z.string(), JsonValueSchema),
  ]),
);

const Instant = z.iso.datetime({ offset: true, error: "must be a time such as 2025-10-01T12:00:00.000Z" });
const Hash = z.string().regex(/^sha256:[a-f0-9]{64}$/, "must be sha256:<64 hex digits>");

/** `stale`: it was done, but an earlier phase ran again since, so it runs again too. */
const PhaseStateSchema = z.enum(["done", "stale", "skipped", "failed"]);
export type PhaseState = z.infer<typeof PhaseStateSchema>;

const ErrorRecord = z.strictObject({
  code: z.string().min(1),
  message: z.string(),
});

/**
 * What the state records for one phase. `done` carries the evidence: the hash of the
 * inputs it ran with and its outputs. `runs` counts how often its work was started, so
 * a reader can tell that a resumed run did not redo it.
 */
export const PhaseCheckpointSchema = z
  .strictObject({
    state: PhaseStateSchema,
    startedAt: Instant.optional(),
    finishedAt: Instant.optional(),
    ms: z.number().nonnegative().optional(),
    inputsHash: Hash.optional(),
    outputs: z.record(z.string(), JsonValueSchema).optional(),
    /** Why it was skipped. */
    reason: z.string().optional(),
    error: ErrorRecord.optional(),
    runs: z.int().nonnegative(),
  })
  .superRefine((checkpoint, ctx) => {
    if (checkpoint.state === "done" && checkpoint.inputsHash === undefined) {
      ctx.addIssue({ code: "custom", path: ["inputsHash"], message: "is required for a done phase" });
    }
    if (checkpoint.state === "done" && checkpoint.finishedAt === undefined) {
      ctx.addIssue({ code: "custom", path: ["finishedAt"], message: "is required for a done phase" });
    }
  });
export type PhaseCheckpoint = z.infer<typeof PhaseCheckpointSchema>;

const RunStatusSchema = z.enum(["running", "succeeded", "failed", "interrupted"]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const RunStateSchema = z.strictObject({
  apiVersion: z.literal(STATE_API_VERSION, {
    error: (issue) => (issue.input === undefined ? undefined : `must be ${STATE_API_VERSION}`),
  }),
  kind: z.literal("RunState"),
  /** What the run does, e.g. "nr cluster register". */
  name: z.string(),
  /** The id of the invocation that wrote it last. */
  runId: z.string().min(1),
  createdAt: Instant,
  updatedAt: Instant,
  status: RunStatusSchema,
  phases: z.record(z.string(), PhaseCheckpointSchema),
  lastError: z
    .strictObject({ code: z.string(), message: z.string(), phase: z.string().optional(), at: Instant })
    .optional(),
  /** The caller's own record (the pins used, the agent, the flags), never a secret. */
  meta: z.record(z.string(), JsonValueSchema),
});
export type RunState = z.infer<typeof RunStateSchema>;

/**
 * What a state is read against: the run's phases, by id, each with the schema of what it
 * records (a phase of a run, or only its id).
 */
export type StatePhase = string | { readonly id: string; readonly outputs?: OutputsSchema<unknown> | undefined };

const OutputsRecord = z.record(z.string(), JsonValueSchema);

/**
 * Parses a state file's text: every problem located (line, field path). Given the run's
 * phases, a phase the run does not have is a problem too (a hand-edited file), and so are
 * recorded outputs that do not match their phase's `outputs` schema; what the schema makes
 * of them (a default, a migration of an older record) is what the state then holds.
 * Never throws.
 */
export function parseState(
  text: string,
  options: { source: string; phases?: readonly StatePhase[] },
): { state?: RunState; problems: Problem[] } {
  const read = readYamlDocuments(text, {
    source: options.source,
    fileKind: "a state file",
    maxDocuments: 1,
    language: "JSON",
  });
  if (read.problems.length > 0) return { problems: read.problems };
  const document = read.documents[0];
  if (document === undefined || document.value === null) {
    return { problems: [{ severity: "error", source: options.source, message: "is empty" }] };
  }
  const result = validateDocument(RunStateSchema, document, { source: options.source });
  if (result.value === undefined) return { problems: result.problems };
  const phases = options.phases;
  if (phases === undefined) return { state: result.value, problems: [] };
  const known = phases.map((entry) => (typeof entry === "string" ? entry : entry.id));
  const problems: Problem[] = Object.keys(result.value.phases)
    .filter((id) => !known.includes(id))
    .map((id) => ({
      severity: "error" as const,
      source: options.source,
      path: ["phases", id],
      ...lineAt(document.lineOf(["phases", id])),
      message: `is not a phase of this run; the phases are ${known.join(", ")}`,
    }));
  if (problems.length > 0) return { problems };
  const state = result.value;
  for (const entry of phases) {
    if (typeof entry === "string" || entry.outputs === undefined) continue;
    const checkpoint = state.phases[entry.id];
    if (checkpoint?.outputs === undefined) continue;
    const at = ["phases", entry.id, "outputs"];
    const checked = validateDocument(
      entry.outputs.pipe(OutputsRecord),
      { value: checkpoint.outputs, lineOf: (path) => document.lineOf([...at, ...path]) },
      { source: options.source },
    );
    if (checked.value === undefined) {
      problems.push(...checked.problems.map((problem) => ({ ...problem, path: [...at, ...(problem.path ?? [])] })));
    } else state.phases[entry.id] = { ...checkpoint, outputs: checked.value };
  }
  return problems.length > 0 ? { problems } : { state, problems: [] };
}

/**
 * A phase's outputs as its checkpoint will hold them: checked against its `outputs` schema
 * (a mismatch is a bug in the phase: it would write what no run could read back) and JSON.
 */
export function validateOutputs(
  phase: { readonly id: string; readonly outputs?: OutputsSchema<unknown> | undefined },
  outputs: Partial<PhaseOutputs>,
): PhaseOutputs {
  const schema = phase.outputs === undefined ? OutputsRecord : phase.outputs.pipe(OutputsRecord);
  const checked = schema.safeParse(outputs);
  if (checked.success) return checked.data;
  const fields = checked.error.issues.map(
    (issue) => `${issue.path.map(String).join(".") || "(outputs)"}: ${issue.message}`,
  );
  throw new BugError(`phase ${phase.id} recorded outputs its schema refuses: ${fields.join("; ")}`);
}

const lineAt = (line: number | undefined) => (line === undefined ? {} : { line });

/** How a store writes: atomically (a temporary file renamed into place). Tests inject their own. */
export type AtomicWrite = (path: string, data: string, mode: number) => Promise<void>;

export interface StateStoreOptions {
  /** The state file. Its directory is created (0700) on the first write. */
  path: string;
  /**
   * Default: @nodekit/fs-safe's writeFileSafe (a temporary file created exclusively,
   * fsync, rename; never through a link, never over another user's file).
   */
  write?: AtomicWrite;
  /** Default: the file as {@link readStateFile} reads it: only when nobody else could have written it. */
  read?: (path: string) => Promise<string | undefined>;
}

/** Where a run's state lives: read it (absent, valid, or the problems), write it atomically. */
export interface StateStore {
  readonly path: string;
  /**
   * The state, or undefined when there is none. RUN_STATE_INVALID (with every problem) when
   * it is not a valid state; RUN_STATE_UNSAFE (or fs-safe's DIR_UNSAFE for its directory)
   * when another user could have written it.
   */
  read(phases?: readonly StatePhase[]): Promise<RunState | undefined>;
  write(state: RunState): Promise<void>;
}

const STATE_DIR = "the state file's directory";

const defaultWrite: AtomicWrite = (path, data, mode) => writeFileSafe(path, data, { mode, what: "the state file" });

/**
 * Reads a state file only when nobody but its user could have written it: its directory is
 * the user's own and not writable by others (nor any directory above it), and the file is a
 * regular file of the user's, mode 0600 or narrower, opened without following a link. A
 * state decides which phases count as done: one planted by another user would make a run
 * skip work, or write its next checkpoint wherever a link points. Returns undefined when
 * there is no file. Throws RUN_STATE_UNSAFE, DIR_UNSAFE or RUN_STATE_UNREADABLE.
 */
async function readStateFile(path: string): Promise<string | undefined> {
  await assertTrustedDir(dirname(path), { own: true, what: STATE_DIR });
  const read = await readPrivateFile(path);
  if (read.kind === "missing") return undefined;
  if (read.kind === "read") return read.data.toString("utf8");
  if (read.kind === "unreadable") {
    throw new UserError(errorCodes.RUN_STATE_UNREADABLE, `cannot read the state file ${path}`, {
      why: read.code,
      next: "make it a file you can read",
      facts: { stateFile: path },
    });
  }
  const next = {
    link: `remove the link (rm ${path}); the file it points to is left as it is. What the run recorded is then forgotten: every phase runs again, each is safe to run again`,
    "not-file": `move ${path} away; every phase then runs again, each is safe to run again`,
    owner: `remove it (what it says is not this user's run: every phase then runs again, each is safe to run again), or if it is yours, chown it back`,
    mode: `chmod 600 ${path}`,
  }[read.fault];
  throw new UserError(errorCodes.RUN_STATE_UNSAFE, `the state file ${path} is not safe to use; it was not read`, {
    why: `${read.reason}, so another user could have written what it says (which phases count as done)`,
    next,
    facts: { stateFile: path, fault: read.fault },
  });
}

export function createStateStore(options: StateStoreOptions): StateStore {
  const write = options.write ?? defaultWrite;
  const read = options.read ?? readStateFile;
  let dirReady = false;
  return {
    path: options.path,
    async read(phases) {
      let text: string | undefined;
      try {
        text = await read(options.path);
      } catch (error) {
        if (error instanceof UserError) throw error;
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return undefined;
        throw new UserError(errorCodes.RUN_STATE_UNREADABLE, `cannot read the state file ${options.path}`, {
          why: code ?? String(error),
          next: "make it a file you can read",
          facts: { stateFile: options.path },
          cause: error,
        });
      }
      if (text === undefined) return undefined;
      const parsed = parseState(text, { source: options.path, ...(phases === undefined ? {} : { phases }) });
      if (parsed.state === undefined) {
        const error = invalidInput(
          errorCodes.RUN_STATE_INVALID,
          `the state file ${options.path}`,
          parsed.problems,
          [`fix the lines above, or move ${options.path} away to start over (what it recorded is then forgotten)`],
          "nothing was changed",
        );
        throw new UserError(error.errorCode, error.message, {
          problems: error.problems,
          next: error.next,
          why: "it was edited by hand, or written by another version",
          facts: { stateFile: options.path },
        });
      }
      return parsed.state;
    },
    async write(state) {
      try {
        if (!dirReady) {
          await ensurePrivateDir(dirname(options.path), { mode: STATE_DIR_MODE, what: STATE_DIR });
          dirReady = true;
        }
        await write(options.path, `${JSON.stringify(state, null, 2)}\n`, STATE_FILE_MODE);
      } catch (error) {
        if (error instanceof UserError) throw error;
        const code = (error as NodeJS.ErrnoException).code;
        if (code === undefined) throw error;
        throw new UserError(errorCodes.RUN_STATE_WRITE_FAILED, `cannot write the state file ${options.path}`, {
          why: code,
          next: "check that the directory is writable and the disk has room, then resume",
          facts: { stateFile: options.path },
          cause: error,
        });
      }
    },
  };
}

/** A fresh state for a run that has not started any phase. */
export function emptyState(name: string, runId: string, at: Date): RunState {
  const time = at.toISOString();
  return {
    apiVersion: STATE_API_VERSION,
    kind: "RunState",
    name,
    runId,
    createdAt: time,
    updatedAt: time,
    status: "running",
    phases: {},
    meta: {},
  };
}
