import { type CommandDefinitions, checkFastParser } from "@nodekit/test-utils";
import { Parser } from "@oclif/core";
import { describe, expect, it } from "vitest";
import { globalFlags, listFlags, outputFlag } from "../flags.ts";
import { Args, Flags } from "../oclif.ts";
import { type FastParseInput, parseFast } from "./parse-fast.ts";

// The fast parser must answer exactly as oclif's Parser.parse does, or decline: checked on
// random command lines over fixture commands that use every definition feature oclif has.

type Input = FastParseInput & CommandDefinitions;

/** How many of 1,500 random lines a fixture's property test must see parsed fast (most of its many-featured lines are not). */
const MIN_ACCEPTED: Record<string, number> = {
  "options, repeats and defaults": 15,
  "relationships and required": 8,
  "arguments around a variadic one": 50,
};

/** oclif's parse as Command.parse calls it (flags aggregated, this command as the context). */
function oclifParse(input: Input, argv: string[]) {
  return Parser.parse(argv, {
    flags: { ...input.baseFlags, ...input.flags } as never,
    args: input.args as never,
    strict: input.strict,
    context: {} as never,
  });
}

const fast = (input: Input, argv: string[]) => parseFast(argv, { ...input, context: {} });

const site = Flags.string({ char: "s", env: "FASTPARSE_TEST_SITE", aliases: ["place"] });

/** Fixture commands: each a set of definitions as a command class holds them. */
const FIXTURES: Record<string, Input> = {
  "a read (get clusters' shape)": {
    baseFlags: { ...globalFlags, site, "request-timeout": Flags.string({ default: "30s" }) },
    flags: {
      output: outputFlag(),
      selector: Flags.string({ char: "l" }),
      ...listFlags,
      watch: Flags.boolean({ char: "w", exclusive: ["wait"] }),
      wait: Flags.boolean({ exclusive: ["watch"] }),
      timeout: Flags.string(),
    },
    args: { name: Args.string({ multiple: true, ignoreStdin: true }) },
  },
  "options, repeats and defaults": {
    baseFlags: globalFlags,
    flags: {
      color: Flags.option({ char: "c", options: ["red", "green"] as const, charAliases: ["k"] })(),
      count: Flags.integer({ char: "n", min: 0, max: 9 }),
      tag: Flags.string({ char: "t", multiple: true }),
      label: Flags.string({ multiple: true, multipleNonGreedy: true }),
      split: Flags.string({ multiple: true, delimiter: "," }),
      mode: Flags.string({ default: async ({ flags }) => (flags.count === undefined ? "auto" : "counted") }),
      quiet: Flags.boolean({ char: "q", allowNo: true, env: "FASTPARSE_TEST_QUIET" }),
      force: Flags.boolean({ default: false, aliases: ["yes"] }),
      region: Flags.string({ env: "FASTPARSE_TEST_REGION", options: ["eu", "us"] }),
      old: Flags.string({ deprecated: { to: "new" } }),
      upper: Flags.string({
        parse: async (input) => {
          if (input === "") throw new Error("empty");
          return input.toUpperCase();
        },
      }),
    },
    args: {
      first: Args.string({ ignoreStdin: true }),
      second: Args.string({ options: ["a", "b"], default: "b", ignoreStdin: true }),
    },
  },
  "relationships and required": {
    baseFlags: globalFlags,
    flags: {
      file: Flags.string({ char: "f", required: true }),
      patch: Flags.string({ char: "p", exclusive: ["patch-file"] }),
      "patch-file": Flags.string({ combinable: ["file"] }),
      dry: Flags.boolean({ dependsOn: ["file"] }),
    },
    args: {},
  },
  "loose arguments (strict: false) and argument parsers": {
    baseFlags: globalFlags,
    flags: { output: outputFlag({ name: false }) },
    args: {
      count: Args.integer({ ignoreStdin: true }),
      rest: Args.string({ default: async () => "none", ignoreStdin: true }),
    },
    strict: false,
  },
  "arguments around a variadic one": {
    baseFlags: globalFlags,
    flags: { tag: Flags.string({ char: "t", multiple: true }) },
    args: {
      source: Args.string({ required: true, ignoreStdin: true }),
      names: Args.string({ multiple: true, ignoreStdin: true }),
      target: Args.string({ required: true, ignoreStdin: true }),
    },
  },
};

describe("the fast parser answers as oclif's parser does, or declines", () => {
  for (const [title, input] of Object.entries(FIXTURES)) {
    it(`random command lines: ${title}`, async () => {
      const accepted = await checkFastParser(
        input,
        { oclif: (argv) => oclifParse(input, argv), fast: (argv) => fast(input, argv) },
        1500,
      );
      // Not a property that holds by declining everything: a good share is parsed fast.
      expect(accepted).toBeGreaterThanOrEqual(MIN_ACCEPTED[title] ?? 100);
    });
  }
});

describe("what the fast parser accepts", () => {
  const read = FIXTURES["a read (get clusters' shape)"] as Input;
  const same = async (input: Input, argv: string[]) => {
    const answer = await fast(input, argv);
    expect(answer, argv.join(" ")).toBeDefined();
    const { flags, args } = await oclifParse(input, argv);
    expect(answer).toStrictEqual({ flags, args });
    return answer;
  };

  it("a read's usual command lines, with the defaults oclif applies", async () => {
    expect(await same(read, ["-o", "json"])).toStrictEqual({
      flags: { "request-timeout": "30s", output: "json" },
      args: {},
    });
    expect(await same(read, ["tenant-a", "-o", "wide", "--site", "lab"])).toStrictEqual({
      flags: { site: "lab", "request-timeout": "30s", output: "wide" },
      args: { name: ["tenant-a"] },
    });
    expect((await same(read, ["-v"]))?.flags.verbose).toBe(true);
    await same(read, ["a", "--output=yaml", "b", "-lteam=a", "--place=x", "--no-headers", "--show-labels"]);
  });

  it("a flag's variable when the flag is not given, and the flag over it", async () => {
    process.env.FASTPARSE_TEST_SITE = "from-env";
    try {
      expect((await same(read, []))?.flags.site).toBe("from-env");
      expect((await same(read, ["--site", "given"]))?.flags.site).toBe("given");
    } finally {
      delete process.env.FASTPARSE_TEST_SITE;
    }
  });

  it("a default computed from the flags given, repeated booleans, a multiple flag's following words", async () => {
    const input = FIXTURES["options, repeats and defaults"] as Input;
    expect((await same(input, ["x"]))?.flags.mode).toBe("auto");
    expect((await same(input, ["x", "-n", "3"]))?.flags.mode).toBe("counted");
    expect((await same(input, ["x", "--force", "--yes"]))?.flags.force).toBe(true);
    expect(await same(input, ["x", "-t", "one", "a", "--color", "red", "b"])).toMatchObject({
      flags: { tag: ["one", "a"], color: "red" },
      args: { first: "x", second: "b" },
    });
  });
});

describe("what the fast parser leaves to oclif", () => {
  const read = FIXTURES["a read (get clusters' shape)"] as Input;
  const options = FIXTURES["options, repeats and defaults"] as Input;
  const declined = async (input: Input, argv: string[]) => {
    expect(await fast(input, argv), argv.join(" ")).toBeUndefined();
  };

  it("--, grouped short flags, --no-…, unknown flags, a missing value, a value like a flag", async () => {
    await declined(read, ["--", "a"]);
    await declined(read, ["-vw"]);
    await declined(options, ["x", "--no-quiet"]);
    await declined(read, ["--nope"]);
    await declined(read, ["-Z"]);
    await declined(read, ["--constructor"]);
    await declined(read, ["-5"]);
    await declined(read, ["--site"]);
    await declined(read, ["--site", "-v"]);
    await declined(read, ["--site", "-"]);
    await declined(read, ["--verbose=yes"]);
  });

  it("a repeated single-value flag, a failing parse or options check, a deprecated flag", async () => {
    await declined(read, ["--site", "a", "--site", "b"]);
    await declined(read, ["-o", "xml"]);
    await declined(read, ["-o", "jsonpath={"]);
    await declined(options, ["x", "--color", "blue"]);
    await declined(options, ["x", "--count", "12"]);
    await declined(options, ["x", "--upper="]);
    await declined(options, ["x", "--old", "1"]);
    await declined(options, ["x", "--split", "a,b"]);
    await declined(options, ["x", "c"]);
  });

  it("a boolean from its variable, a relationship flag with a value, a required flag or argument missing", async () => {
    process.env.FASTPARSE_TEST_QUIET = "1";
    try {
      await declined(options, ["x"]);
    } finally {
      delete process.env.FASTPARSE_TEST_QUIET;
    }
    await declined(read, ["--watch"]);
    await declined(read, ["--wait"]);
    const relations = FIXTURES["relationships and required"] as Input;
    await declined(relations, ["-f", "a", "--dry"]);
    await declined(relations, ["-f", "a", "-p", "{}"]);
    await declined(relations, ["-f", "a", "--patch-file", "b"]);
    await declined(relations, ["--dry"]);
    const exactlyOne = {
      flags: {
        patch: Flags.string({ exactlyOne: ["patch", "patch-file"] }),
        "patch-file": Flags.string({ exactlyOne: ["patch", "patch-file"] }),
      },
    };
    await declined(exactlyOne, []);
    await declined(exactlyOne, ["--patch", "a"]);
    await declined(FIXTURES["arguments around a variadic one"] as Input, ["a"]);
  });

  it("more arguments than a strict command takes; a missing argument oclif would read from stdin", async () => {
    await declined(options, ["x", "a", "b"]);
    await declined(options, ["x", "a", "-"]);
    await declined({ args: { name: Args.string() } }, []);
    expect(await fast({ args: { name: Args.string() } }, ["given"])).toStrictEqual({
      flags: {},
      args: { name: "given" },
    });
  });

  it("the --json flag", async () => {
    await declined({ ...read, enableJsonFlag: true }, ["-o", "json"]);
  });
});
