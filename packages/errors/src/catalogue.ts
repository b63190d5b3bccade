import type { ExitCodeValue } from "./exit-codes.ts";

/** What a package says about one of its error codes: the exit code it always has, and what it means. */
export interface ErrorCodeSpec {
  readonly exitCode: ExitCodeValue;
  /** One line for docs/errors.md: what happened, in the user's terms. */
  readonly meaning: string;
}

/**
 * One permanent error code, as a package's table defines it. A `UserError` is built from
 * one of these, so every code that can reach a user is in some table (and so in
 * docs/errors.md), and its exit code cannot differ from one throw site to the next.
 */
export interface ErrorCode<C extends string = string> extends ErrorCodeSpec {
  readonly code: C;
  /** The table it belongs to (a package name such as "k8s-auth"). */
  readonly area: string;
}

export type ErrorCodeTable<T extends Record<string, ErrorCodeSpec>> = {
  readonly [K in keyof T & string]: ErrorCode<K>;
};

const CODE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

/**
 * A package's table of error codes: `code → { exitCode, meaning }`. Codes are
 * SCREAMING_SNAKE_CASE literals written here once, so `grep` finds every one.
 *
 *     export const errorCodes = defineErrorCodes("sitespec", {
 *       SITESPEC_INVALID: { exitCode: ExitCode.InvalidInput, meaning: "The hosts CSV has problems; nothing was written." },
 *     });
 *     throw new UserError(errorCodes.SITESPEC_INVALID, "hosts.csv has 2 problems; nothing was written", { problems });
 */
export function defineErrorCodes<const T extends Record<string, ErrorCodeSpec>>(
  area: string,
  specs: T,
): ErrorCodeTable<T> {
  // Every package's table runs this at import, in every process: it only copies and freezes.
  // The codes' names and meanings are checked by `catalogue()`, which the docs generator and
  // the catalogue test run over every table.
  const table: Record<string, ErrorCode> = {};
  for (const code in specs) {
    const spec = specs[code] as ErrorCodeSpec;
    table[code] = Object.freeze({ code, area, exitCode: spec.exitCode, meaning: spec.meaning });
  }
  return Object.freeze(table) as ErrorCodeTable<T>;
}

/**
 * Every code of the given tables, sorted by code. A code that is not SCREAMING_SNAKE_CASE, has
 * no meaning, or is defined twice (the tables disagree) is a bug: it throws.
 */
export function catalogue(tables: ReadonlyArray<Record<string, ErrorCode>>): ErrorCode[] {
  const seen = new Map<string, ErrorCode>();
  for (const table of tables) {
    for (const entry of Object.values(table)) {
      if (!CODE.test(entry.code)) {
        throw new TypeError(`error code ${JSON.stringify(entry.code)} (${entry.area}) is not SCREAMING_SNAKE_CASE`);
      }
      if (entry.meaning.trim() === "") throw new TypeError(`error code ${entry.code} (${entry.area}) has no meaning`);
      const earlier = seen.get(entry.code);
      if (earlier !== undefined && earlier !== entry) {
        throw new TypeError(`error code ${entry.code} is defined by both ${earlier.area} and ${entry.area}`);
      }
      seen.set(entry.code, entry);
    }
  }
  return [...seen.values()].sort((a, b) => a.code.localeCompare(b.code));
}
