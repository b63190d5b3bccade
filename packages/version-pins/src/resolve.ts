import type { FieldPath, LocatedDocument } from "@nodekit/documents";
import { type Problem, UserError } from "@nodekit/errors";
import { DEFAULT_PINS } from "./defaults.ts";
import { errorCodes } from "./errors.ts";
import { pinSetHash } from "./hash.ts";
import { parsePins, validatePins } from "./parse.ts";
import type { Arch, PinSet } from "./schema.ts";

/** A pin set ready to use, with where it came from. The CLI records all of it in its state. */
export interface ResolvedPins {
  pins: PinSet;
  /** `platform`: served by the NodeRings API (validated there); `offline`: local defaults (not validated). */
  origin: "platform" | "offline";
  /** The URL the pins came from, or the config file (or "offline defaults") for offline pins. */
  source: string;
  /** {@link pinSetHash} of `pins`, for checkpoints. */
  hash: string;
  /** What to tell the user before going on (offline pins: not platform-validated). */
  warnings: string[];
}

/**
 * Where platform pins come from: the NodeRings API client's `getPinsDocument` (which
 * has the request deadline and the bounded retries), or anything else that answers the same.
 */
export interface PinsSource {
  getPinsDocument(options: { arch: Arch }): Promise<{ text: string; url: string }>;
}

/**
 * The platform-pinned versions for this architecture, from the NodeRings API. The
 * answer is validated like any document: a pin set with problems is a PINS_INVALID
 * UserError listing every one (line and field path in the answer), and nothing is
 * installed. Transport failures are the client's UserErrors, unchanged.
 */
export async function fetchPins(source: PinsSource, options: { arch: Arch }): Promise<ResolvedPins> {
  const { text, url } = await source.getPinsDocument({ arch: options.arch });
  const { value, problems } = parsePins(text, { source: url });
  if (value === undefined) {
    throw new UserError(
      errorCodes.PINS_INVALID,
      `the pin set from ${url} has ${count(problems)}; nothing was installed`,
      {
        why: "the platform answered with a pin set this version of the tool cannot use",
        next: "retry later; if the problems stay, report them to NodeRings with the lines above",
        problems,
        facts: { source: url },
      },
    );
  }
  return { pins: value, origin: "platform", source: url, hash: pinSetHash(value), warnings: [] };
}

export interface OfflinePinsOptions {
  /**
   * Local config defaults: a document whose `tools` map replaces the shipped defaults
   * tool by tool (a tool given here is taken whole: a new helm version brings its own
   * artifacts). Read it with `readYamlDocuments` to have lines in the problems.
   */
  defaults?: LocatedDocument | { readonly value: unknown };
  /** Where in `defaults` the pins section is, e.g. `["pins"]` in a larger config file. The document itself by default. */
  at?: FieldPath;
  /** The config file's name in problems and in `ResolvedPins.source`. */
  source?: string;
}

/**
 * Pins without asking the platform (`--offline`): the shipped {@link DEFAULT_PINS},
 * with the local config's tools in their place. Always carries a warning that the
 * combination is not platform-validated. Problems in the config are a PINS_INVALID
 * UserError, each with its line and field path in the config file.
 */
export function offlinePins(options: OfflinePinsOptions = {}): ResolvedPins {
  const at = options.at ?? [];
  const source = options.source ?? "offline defaults";
  const overrides = options.defaults === undefined ? undefined : valueAt(options.defaults.value, at);
  const problems: Problem[] = [];
  let tools: Record<string, unknown> = {};
  if (overrides !== undefined && overrides !== null) {
    if (!isObject(overrides)) {
      problems.push(problem(source, at, lineOf(options.defaults, at), "must be a mapping with a tools field"));
    } else {
      for (const key of Object.keys(overrides)) {
        if (key !== "tools")
          problems.push(
            problem(
              source,
              [...at, key],
              lineOf(options.defaults, [...at, key]),
              "is not a known field; the fields here are tools",
            ),
          );
      }
      const given = overrides.tools;
      if (given !== undefined && !isObject(given)) {
        problems.push(
          problem(
            source,
            [...at, "tools"],
            lineOf(options.defaults, [...at, "tools"]),
            "must be a mapping of tool name to pin",
          ),
        );
      } else if (given !== undefined) {
        tools = given;
      }
    }
  }
  if (problems.length > 0) throw invalidPins(source, problems);

  const merged = {
    ...DEFAULT_PINS,
    name: overridden(tools) ? "offline-defaults+config" : DEFAULT_PINS.name,
    tools: { ...DEFAULT_PINS.tools, ...tools },
  };
  const located = {
    value: merged,
    lineOf: (path: FieldPath) =>
      path[0] === "tools" && typeof path[1] === "string" && Object.hasOwn(tools, path[1])
        ? lineOf(options.defaults, [...at, ...path])
        : undefined,
  };
  const result = validatePins(located, { source });
  if (result.value === undefined) {
    throw invalidPins(
      source,
      result.problems.map((p) => ({ ...p, path: [...at, ...(p.path ?? [])] })),
    );
  }
  const pins = result.value;
  const list = Object.entries(pins.tools)
    .map(([name, pin]) => `${name} ${pin.version}`)
    .join(", ");
  return {
    pins,
    origin: "offline",
    source,
    hash: pinSetHash(pins),
    warnings: [
      `offline: using local default pins (${list}); NodeRings has not validated this combination, so use it only for constrained experiments`,
    ],
  };
}

function invalidPins(source: string, problems: Problem[]): UserError {
  return new UserError(errorCodes.PINS_INVALID, `${source} has ${count(problems)} in its pins; nothing was installed`, {
    problems,
    next: "fix the pins in the local config, or leave them out to use the shipped defaults",
    facts: { source },
  });
}

const overridden = (tools: Record<string, unknown>) => Object.keys(tools).length > 0;
const count = (problems: Problem[]) => `${problems.length} ${problems.length === 1 ? "problem" : "problems"}`;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function valueAt(value: unknown, path: FieldPath): unknown {
  let current = value;
  for (const segment of path) {
    if (!isObject(current) && !Array.isArray(current)) return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

function lineOf(document: OfflinePinsOptions["defaults"], path: FieldPath): number | undefined {
  return document !== undefined && "lineOf" in document ? document.lineOf(path) : undefined;
}

function problem(source: string, path: FieldPath, line: number | undefined, message: string): Problem {
  return {
    severity: "error",
    source,
    ...(line === undefined ? {} : { line }),
    ...(path.length > 0 ? { path } : {}),
    message,
  };
}
