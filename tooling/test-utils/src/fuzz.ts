import fc from "fast-check";
import { expect } from "vitest";

/** How many generated inputs every document reader's fuzz test drives through it (issue 9: at least 10,000). */
export const FUZZ_RUNS = 10_000;

/** What hostile or broken input is made of, beside the format's own punctuation. */
const HOSTILE = [
  "\u0000",
  "\u001b[2J",
  "\u001b]52;c;ZXZpbA==\u0007",
  "\u202e",
  "\uFEFF",
  "\r",
  "\r\n",
  "\t",
  "é",
  "日本",
  "\uD800",
  "&a ",
  "*a",
  "&b [*a, *a, *a, *a]",
  "[*b, *b, *b, *b]",
  "&c [*c]",
  "!!binary ",
  "!!js/function ",
  "<<: ",
  "? ",
  "%YAML 1.1\n",
  "---\n",
  "...\n",
  "9".repeat(400),
  "-1e309",
  "0x",
  "~",
  "null",
  "__proto__",
  "constructor",
  '"',
  "'",
  "\\",
  ",",
  ":",
  ": ",
  "- ",
  "{",
  "}",
  "[",
  "]",
  "#",
  "\n",
  "  ",
];

/**
 * Text for a reader's fuzz test: mutations of valid documents (splices of the format's
 * own tokens, hostile fragments and random strings, at random places), sequences of those
 * tokens alone, and plain random strings. Most samples get deep into the reader before
 * they go wrong, which random text alone never does.
 */
export function fuzzText(valid: readonly string[], tokens: readonly string[] = []): fc.Arbitrary<string> {
  const piece = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE, ...tokens) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
  );
  const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 12 }), insert: fc.array(piece, { maxLength: 4 }) });
  const mutated = fc
    .tuple(fc.constantFrom(...valid), fc.array(edit, { minLength: 1, maxLength: 6 }))
    .map(([text, edits]) =>
      edits.reduce((out, { at, remove, insert }) => {
        const where = out.length === 0 ? 0 : at % (out.length + 1);
        return out.slice(0, where) + insert.join("") + out.slice(where + remove);
      }, text),
    );
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 2, arbitrary: fc.array(piece, { maxLength: 40 }).map((parts) => parts.join("")) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.constantFrom(...valid) },
  );
}

/** Bytes for readers that take a file as it is on disk: fuzzText encoded, or with raw bytes spliced in. */
export function fuzzBytes(valid: readonly string[], tokens: readonly string[] = []): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 4, arbitrary: fuzzText(valid, tokens).map((text) => new Uint8Array(Buffer.from(text, "utf8"))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fuzzText(valid, tokens), fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.nat())
        .map(([text, raw, at]) => {
          const bytes = Buffer.from(text, "utf8");
          const where = at % (bytes.length + 1);
          return new Uint8Array(Buffer.concat([bytes.subarray(0, where), raw, bytes.subarray(where)]));
        }),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
  );
}

interface LocatedProblem {
  severity: string;
  source: string;
  line?: number;
  message: string;
}

/**
 * What every problem a reader returns must be: for the named input, with a message, a line
 * of the input when it has one; and printed (by `format`), one line without a single
 * terminal control character, whatever the input held.
 */
export function problemsAreLocated(
  problems: readonly LocatedProblem[],
  source: string,
  text: string,
  format: (problem: never) => string,
): boolean {
  // CR alone ends a line too, in YAML and CSV alike.
  const lines = text.split(/\r\n|\r|\n/).length;
  return problems.every(
    (problem) =>
      (problem.severity === "error" || problem.severity === "warning") &&
      problem.source === source &&
      typeof problem.message === "string" &&
      problem.message.length > 0 &&
      (problem.line === undefined ||
        (Number.isInteger(problem.line) && problem.line >= 1 && problem.line <= lines + 1)) &&
      // biome-ignore lint/suspicious/noControlCharactersInRegex: what is checked for is exactly those
      !/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(format(problem as never)),
  );
}

/** A JSON value, as JSON.parse makes it. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every object and array in `value`, as paths from the root. */
function containers(value: Json, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== "object" || value === null) return [];
  const entries: Array<[string | number, Json]> = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  return [path, ...entries.flatMap(([key, item]) => containers(item, [...path, key]))];
}

/** Sets an own enumerable key, as JSON.parse does (`__proto__` too). */
function setOwn(target: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * For a checker's property tests: `value` (what `values` makes) with `edits` changes, each in one
 * of its objects or arrays: a key or an item dropped, a value replaced by one of `replacements`,
 * a key of `keys` added (`__proto__` as JSON.parse makes it: an own key) or an item appended,
 * or an object's keys put in reverse order. The result is a fresh value, as JSON.parse makes it.
 */
export function mutatedJson(
  value: unknown,
  replacements: fc.Arbitrary<unknown>,
  keys: readonly string[],
  edits = 1,
): fc.Arbitrary<unknown> {
  const edit = (current: unknown): fc.Arbitrary<unknown> =>
    fc
      .record({
        at: fc.constantFrom(...containers(current as Json)),
        how: fc.constantFrom("drop", "set", "add", "reorder"),
        pick: fc.nat(),
        key: fc.constantFrom(...keys),
        with: replacements,
      })
      .map(({ at, how, pick, key, with: replacement }) => {
        const next = replacement as Json;
        const copy = JSON.parse(JSON.stringify(current)) as Json;
        const target = at.reduce<Json>((node, step) => (node as Record<string, Json>)[step] as Json, copy) as
          | Json[]
          | Record<string, Json>;
        const names = Object.keys(target);
        const chosen = names.length > 0 ? names[pick % names.length] : undefined;
        if (Array.isArray(target)) {
          if (how === "drop" && chosen !== undefined) target.splice(Number(chosen), 1);
          else if (how === "set" && chosen !== undefined) target[Number(chosen)] = next;
          else if (how === "add") target.push(next);
        } else if (how === "drop" && chosen !== undefined) delete target[chosen];
        else if (how === "set" && chosen !== undefined) setOwn(target, chosen, next);
        else if (how === "add") setOwn(target, key, next);
        else if (how === "reorder") {
          const entries = Object.entries(target).reverse();
          for (const [name] of entries) delete target[name];
          for (const [name, item] of entries) setOwn(target, name, item);
        }
        return copy;
      });
  let result = edit(value);
  for (let more = 1; more < edits; more++) result = result.chain(edit);
  return result;
}

/**
 * The fuzz tests' loop: `check` on FUZZ_RUNS inputs `inputs` makes, and then that it ran on
 * every one (an input fast-check skipped would not count).
 */
export async function everyFuzzRun<T>(
  inputs: fc.Arbitrary<T>,
  check: (input: T) => void | Promise<void>,
): Promise<void> {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(inputs, async (input) => {
      runs += 1;
      await check(input);
    }),
    { numRuns: FUZZ_RUNS },
  );
  expect(runs).toBe(FUZZ_RUNS);
}

/** Mostly `good` (12 times in 13), sometimes `bad`: what a checker's property tests put in a field. */
export const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ arbitrary: good, weight: 12 }, { arbitrary: bad, weight: 1 });

/**
 * What a checker's property tests read: a value of `values` as it is (weight 2), with one edit
 * of mutatedJson (4) or two (2), or any JSON at all (1); `more` adds arms of its own.
 */
export function mutatedValues(
  values: fc.Arbitrary<unknown>,
  replacements: fc.Arbitrary<unknown>,
  keys: readonly string[],
  ...more: { arbitrary: fc.Arbitrary<unknown>; weight: number }[]
): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: values, weight: 2 },
    { arbitrary: values.chain((value) => mutatedJson(value, replacements, keys)), weight: 4 },
    { arbitrary: values.chain((value) => mutatedJson(value, replacements, keys, 2)), weight: 2 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 },
    ...more,
  );
}
