import { readdir } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

// Random command lines for a command's flag and argument definitions (oclif's), valid and
// near-valid: each flag in every form oclif takes, repeated flags, unknown ones, missing
// values, `--`, `-`, arguments anywhere, the flags' environment variables set or not. The
// fast parser's property tests (cli-kit's, and the CLIs' over every command) run them through
// it and through oclif's Parser.parse, which must agree.

interface FlagLike {
  type?: string;
  required?: boolean;
  char?: string;
  aliases?: readonly string[];
  charAliases?: readonly string[];
  options?: readonly string[];
  env?: string;
}

interface ArgLike {
  required?: boolean;
  options?: readonly string[];
}

/** The definitions a command parses with (what BaseCommand passes to oclif's parse). */
export interface CommandDefinitions {
  flags?: object | undefined;
  baseFlags?: object | undefined;
  args?: object | undefined;
}

interface CommandLine {
  argv: string[];
  /** The flags' environment variables: a value, or undefined for unset. */
  env: Record<string, string | undefined>;
}

/** Values and words: plain, empty, with `=`, oclif's special `-` and `--`, ones that look like flags. */
const WORDS = [
  "a",
  "b",
  "lab",
  "tenant-a",
  "table",
  "wide",
  "json",
  "yaml",
  "name",
  "jsonpath={.items[*].name}",
  "jsonpath={",
  "1",
  "0",
  "3",
  "30s",
  "10m",
  "team=a",
  "x=y=z",
  "a,b",
  "",
  " ",
  "-",
  "-1",
  "-x",
  "--x",
  "--",
  "a b",
];

const UNKNOWN_FLAGS = ["--nope", "--nope=1", "-Z", "-Zvalue", "--constructor", "--__proto__", "--toString=1", "--="];

/**
 * Random command lines for these definitions (see the module comment): half of them plain
 * (known flags in their usual forms, plain values and words), half near-valid.
 */
function commandLines(definitions: CommandDefinitions): fc.Arbitrary<CommandLine> {
  const flags = Object.entries({ ...definitions.baseFlags, ...definitions.flags } as Record<string, FlagLike>);
  const args = Object.values((definitions.args ?? {}) as Record<string, ArgLike>);
  const chars = flags.flatMap(([, flag]) => [flag.char, ...(flag.charAliases ?? [])]).filter((c) => c !== undefined);
  const plainWords = WORDS.filter((word) => !word.startsWith("-"));
  const valuesOf = (options: readonly string[] | undefined, noisy: boolean) =>
    fc.oneof(
      { weight: options && options.length > 0 ? 4 : 0, arbitrary: fc.constantFrom(...(options ?? []), "unused") },
      { weight: 3, arbitrary: fc.constantFrom(...(noisy ? WORDS : plainWords)) },
      { weight: 1, arbitrary: fc.nat({ max: 20 }).map(String) },
      { weight: noisy ? 1 : 0, arbitrary: fc.string({ maxLength: 6 }) },
    );
  const flagToken = (name: string, flag: FlagLike, noisy: boolean): fc.Arbitrary<string[]> => {
    const longs = [name, ...(flag.aliases ?? [])];
    const shorts = [flag.char, ...(flag.charAliases ?? [])].filter((c) => c !== undefined);
    const value = valuesOf(flag.options, noisy);
    const long = fc.constantFrom(...longs);
    const short = fc.constantFrom(...shorts, "unused");
    const hasShort = shorts.length > 0;
    const forms: fc.Arbitrary<string[]>[] = [];
    if (flag.type === "boolean") {
      forms.push(long.map((n) => [`--${n}`]));
      if (hasShort) forms.push(short.map((c) => [`-${c}`]));
      if (noisy) {
        forms.push(long.map((n) => [`--no-${n}`]));
        forms.push(fc.tuple(long, value).map(([n, v]) => [`--${n}=${v}`]));
        if (hasShort) forms.push(fc.tuple(short, fc.constantFrom(...chars, "Z")).map(([c, d]) => [`-${c}${d}`]));
      }
    } else {
      forms.push(fc.tuple(long, value).map(([n, v]) => [`--${n}`, v]));
      forms.push(fc.tuple(long, value).map(([n, v]) => [`--${n}=${v}`]));
      if (hasShort) {
        forms.push(fc.tuple(short, value).map(([c, v]) => [`-${c}`, v]));
        forms.push(fc.tuple(short, value).map(([c, v]) => [`-${c}${v}`]));
        forms.push(fc.tuple(short, value).map(([c, v]) => [`-${c}=${v}`]));
      }
      // The value missing (or the next token taken as one).
      if (noisy) forms.push(long.map((n) => [`--${n}`]));
    }
    return fc.oneof(...forms);
  };
  const argOptions = args.flatMap((arg) => arg.options ?? []);
  const line = (noisy: boolean) => {
    const word = valuesOf(argOptions.length > 0 ? argOptions : undefined, noisy).map((w) => [w]);
    const token = fc.oneof(
      ...flags.map(([name, flag]) => ({ weight: 2, arbitrary: flagToken(name, flag, noisy) })),
      { weight: Math.max(2, flags.length), arbitrary: word },
      { weight: noisy ? 2 : 0, arbitrary: fc.constantFrom(...UNKNOWN_FLAGS, "--", "-").map((t) => [t]) },
    );
    const tokens = fc.array(token, { maxLength: noisy ? 7 : 5 });
    if (noisy) return tokens.map((groups) => groups.flat());
    // A plain line has the required flags too, each somewhere, and a word per required argument.
    const required = [
      ...flags.filter(([, flag]) => flag.required).map(([name, flag]) => flagToken(name, flag, false)),
      ...args.filter((arg) => arg.required).map(() => word),
    ];
    return fc.tuple(tokens, fc.tuple(...required.map((group) => fc.tuple(group, fc.nat())))).map(([groups, placed]) => {
      const all = [...groups];
      for (const [group, at] of placed) all.splice(at % (all.length + 1), 0, group);
      return all.flat();
    });
  };
  const envNames = [...new Set(flags.map(([, flag]) => flag.env).filter((e) => e !== undefined))];
  const env = fc.record(
    Object.fromEntries(envNames.map((name) => [name, fc.option(valuesOf(undefined, true), { nil: undefined })])),
  ) as fc.Arbitrary<Record<string, string | undefined>>;
  return fc.record({ argv: fc.oneof(line(false), line(true)), env });
}

/** A parse's `{ flags, args }`. */
export interface ParsedLine {
  flags: Record<string, unknown>;
  args: Record<string, unknown>;
}

/**
 * Runs a command line through oclif's parser and the fast one, with the line's environment
 * variables set (and restored after): oclif's answer (or that it failed) and the fast parser's
 * (undefined for a decline).
 */
async function parseBoth(
  line: CommandLine,
  parsers: {
    oclif: (argv: string[]) => Promise<ParsedLine>;
    fast: (argv: string[]) => Promise<ParsedLine | undefined>;
  },
): Promise<{ oclif: ParsedLine | { failed: string }; fast: ParsedLine | undefined }> {
  const saved = Object.fromEntries(Object.keys(line.env).map((name) => [name, process.env[name]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  set(line.env);
  try {
    let oclif: ParsedLine | { failed: string };
    try {
      const { flags, args } = await parsers.oclif([...line.argv]);
      oclif = { flags, args };
    } catch (error) {
      oclif = { failed: (error as Error).message };
    }
    return { oclif, fast: await parsers.fast([...line.argv]) };
  } finally {
    set(saved);
  }
}

/**
 * The property: on `numRuns` random command lines for these definitions, the fast parser
 * declines or answers exactly what oclif answers (deep equal, a key set to undefined included).
 * Returns how many lines it answered, for the caller to check that they are not few.
 */
export async function checkFastParser(
  definitions: CommandDefinitions,
  parsers: Parameters<typeof parseBoth>[1],
  numRuns: number,
): Promise<number> {
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(commandLines(definitions), async (line) => {
      const both = await parseBoth(line, parsers);
      if (both.fast === undefined) return;
      accepted++;
      expect(both.oclif).toStrictEqual(both.fast);
    }),
    { numRuns },
  );
  return accepted;
}

/** Every command class under a CLI's src/commands (each file's default export), by file. */
export async function commandClassesIn<C>(dir: string): Promise<[string, C][]> {
  const files = (await readdir(dir, { recursive: true })).filter((file) => file.endsWith(".ts")).sort();
  return Promise.all(files.map(async (file) => [file, ((await import(join(dir, file))) as { default: C }).default]));
}

/**
 * Whether every command line of these definitions is oclif's to parse: a flag in an
 * exactlyOne or atLeastOne group (oclif's checks, which the fast parser does not make).
 */
export function onlyOclifParses(definitions: CommandDefinitions): boolean {
  const flags = Object.values({ ...definitions.baseFlags, ...definitions.flags }) as {
    exactlyOne?: readonly string[];
    atLeastOne?: readonly string[];
  }[];
  return flags.some((flag) => (flag.exactlyOne?.length ?? 0) > 0 || (flag.atLeastOne?.length ?? 0) > 0);
}

/** What a CLI's suite below runs both parsers with: cli-kit's and oclif's, passed in (test-utils depends on neither). */
export interface CliParsers<C> {
  /** cli-kit's commandParseInput: what BaseCommand.init parses with. */
  commandParseInput: (Class: C) => CommandDefinitions;
  /** cli-kit's parseFast. */
  parseFast: (argv: string[], input: CommandDefinitions & { context: object }) => Promise<ParsedLine | undefined>;
  /** oclif's Parser. */
  Parser: { parse: (argv: string[], options: never) => Promise<ParsedLine> };
}

/**
 * The suite each CLI runs over every one of its commands (`src/commands` under `dir`): on
 * random command lines the fast parser declines or answers exactly what oclif's parser
 * answers, and plain lines of each command are parsed fast, except where oclif's checks are
 * needed (onlyOclifParses).
 */
export function describeFastParserOverCommands<C>(options: {
  cli: string;
  dir: string;
  /** At least this many command files are expected (a wrong `dir` finds none). */
  atLeast: number;
  parsers: CliParsers<C>;
  runs?: number;
}): void {
  const { commandParseInput, parseFast, Parser } = options.parsers;
  const oclif = (Class: C, argv: string[]) => {
    const input = commandParseInput(Class);
    return Parser.parse(argv, { ...input, flags: { ...input.baseFlags, ...input.flags }, context: {} } as never);
  };
  const fast = (Class: C, argv: string[]) => parseFast(argv, { ...commandParseInput(Class), context: {} });
  describe(`${options.cli}'s commands: the fast parser answers as oclif's does, or declines`, async () => {
    const classes = await commandClassesIn<C>(options.dir);
    it("lists every command", () => {
      expect(classes.length).toBeGreaterThanOrEqual(options.atLeast);
    });
    for (const [file, Class] of classes) {
      it(file, async () => {
        const accepted = await checkFastParser(
          commandParseInput(Class),
          { oclif: (argv) => oclif(Class, argv), fast: (argv) => fast(Class, argv) },
          options.runs ?? 1000,
        );
        if (onlyOclifParses(commandParseInput(Class))) expect(accepted, file).toBe(0);
        else expect(accepted, file).toBeGreaterThan(0);
      });
    }
  });
}
