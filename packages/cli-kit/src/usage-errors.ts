import { errorCodes, UserError } from "@nodekit/errors";
import { distance } from "fastest-levenshtein";

// oclif's parse errors for a command line a user typed, in the house style: what is wrong,
// named as the user would type it, and what to type instead ("did you mean --dry-run?", an
// example with the argument), as kubectl and git say it. Anything else is left to
// describeFailure.

/** What of a command the messages name: its words, its flags, its arguments, its examples. */
export interface CommandShape {
  bin: string;
  /** oclif's id, `get:clusters`. */
  id: string;
  flags: Readonly<Record<string, { char?: string; hidden?: boolean }>>;
  args?: Readonly<Record<string, { description?: string }>>;
  examples?: ReadonlyArray<string | { command: string; description?: string }>;
}

/**
 * The flag names closest to a mistyped one: those within a third of its length in edits (at
 * least two) or that it begins, the closest first; none when nothing is near.
 */
export function suggestFlags(typed: string, flags: readonly string[], max = 2): string[] {
  const name = typed.replace(/^-+/, "").split("=")[0] ?? "";
  if (name === "") return [];
  const limit = Math.max(2, Math.floor(name.length / 3));
  const scored = flags
    .map((flag) => ({ flag, score: flag.startsWith(name) ? 0 : distance(name, flag) }))
    .filter((entry) => entry.score <= limit)
    .sort((a, b) => a.score - b.score || a.flag.length - b.flag.length || (a.flag < b.flag ? -1 : 1));
  const best = scored[0]?.score;
  return scored
    .filter((entry) => entry.score === best)
    .map((entry) => `--${entry.flag}`)
    .slice(0, max);
}

const words = (shape: CommandShape) => `${shape.bin} ${shape.id.split(":").join(" ")}`;

/** The command's examples as typed: oclif's `<%= config.bin %>` and `<%= command.id %>` filled in. */
function examples(shape: CommandShape): string[] {
  return (shape.examples ?? []).map((example) =>
    (typeof example === "string" ? example : example.command)
      .replaceAll("<%= config.bin %>", shape.bin)
      .replaceAll("<%= command.id %>", shape.id.split(":").join(" ")),
  );
}

interface ParseErrorLike {
  message?: unknown;
  args?: unknown;
  flags?: unknown;
}

/**
 * The user error for oclif's RequiredArgsError and NonExistentFlagsError (told apart by their
 * messages and fields, so that oclif's parser need not be loaded to ask); undefined for any
 * other error.
 */
export function usageError(error: unknown, shape: CommandShape): UserError | undefined {
  const candidate = error as ParseErrorLike | undefined;
  const message = typeof candidate?.message === "string" ? candidate.message : "";
  if (/^Missing \d+ required args?/.test(message) && Array.isArray(candidate?.args)) {
    const missing = (candidate.args as Array<{ name?: string; description?: string }>).filter(
      (arg) => typeof arg.name === "string",
    );
    const named = missing.map((arg) => arg.name?.toUpperCase() ?? "");
    const said = (text: string) => `${text.charAt(0).toLowerCase()}${text.slice(1)}`.replace(/\.$/, "");
    const described = missing
      .map((arg) =>
        arg.description ? `${arg.name?.toUpperCase()}, ${said(arg.description)}` : arg.name?.toUpperCase(),
      )
      .join("; and ");
    // An example that passes the argument: a word after the command's that is not a flag.
    const example = examples(shape).find((line) => {
      const rest = line.split(/\s+/).slice(words(shape).split(" ").length);
      return rest[0] !== undefined && !rest[0].startsWith("-");
    });
    return new UserError(errorCodes.USAGE, `${words(shape)} needs ${described}`, {
      next: [
        example === undefined ? `${words(shape)} ${named.join(" ")}` : `for example: ${example}`,
        `${words(shape)} --help shows every argument and flag`,
      ],
      facts: { missing: named.join(",") },
    });
  }
  if (/^Nonexistent flags?:/.test(message) && Array.isArray(candidate?.flags)) {
    const typed = (candidate.flags as unknown[]).filter((flag): flag is string => typeof flag === "string");
    const known = Object.entries(shape.flags)
      .filter(([, flag]) => !flag.hidden)
      .map(([name]) => name);
    const suggestions = typed.map((flag) => ({ flag, near: suggestFlags(flag, known) }));
    const hint = suggestions
      .filter((entry) => entry.near.length > 0)
      .map((entry) => `${entry.flag}: did you mean ${entry.near.join(" or ")}?`);
    return new UserError(
      errorCodes.USAGE,
      `${words(shape)} has no flag ${typed.join(", ")}${hint.length === 1 && typed.length === 1 ? `; did you mean ${suggestions[0]?.near.join(" or ")}?` : ""}`,
      {
        next: [
          ...(hint.length > 1 || (hint.length === 1 && typed.length > 1) ? hint : []),
          `${words(shape)} --help lists its flags`,
        ],
        facts: { flags: typed.join(",") },
      },
    );
  }
  return undefined;
}
