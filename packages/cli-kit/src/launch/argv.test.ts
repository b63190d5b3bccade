import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { arrangeArgv, asksForHelp, type CommandTable } from "./argv.ts";

const commands = new Set(["get:clusters", "get:kubeconfig", "config:use-site", "plugins", "plugins:install", "hello"]);
const table: CommandTable = {
  isCommand: (id) => commands.has(id),
  isTopic: (id) => ["get", "config", "plugins"].includes(id),
  globalFlags: [
    { name: "verbose", char: "v", takesValue: false },
    { name: "json-logs", takesValue: false },
    { name: "site", takesValue: true },
  ],
};

describe("arrangeArgv", () => {
  test.each([
    [["--site", "lab", "get", "clusters"], ["get", "clusters", "--site", "lab"], "get:clusters"],
    [["--site=lab", "get", "clusters", "x"], ["get", "clusters", "--site=lab", "x"], "get:clusters"],
    [["get", "-v", "clusters", "-o", "json"], ["get", "clusters", "-v", "-o", "json"], "get:clusters"],
    [["-v", "--json-logs", "hello", "--name", "x"], ["hello", "-v", "--json-logs", "--name", "x"], "hello"],
    [["plugins", "install", "p"], ["plugins", "install", "p"], "plugins:install"],
    [["plugins", "-v"], ["plugins", "-v"], "plugins"],
    [["get", "clusters", "--site", "lab"], ["get", "clusters", "--site", "lab"], "get:clusters"],
  ])("%j → %j (%s)", (argv, arranged, id) => {
    const result = arrangeArgv(argv, table);
    expect(result.argv).toEqual(arranged);
    expect(result.id).toBe(id);
  });

  test("a topic alone, an unknown word, a flag it does not know", () => {
    expect(arrangeArgv(["--site", "lab", "get"], table)).toMatchObject({
      topic: "get",
      argv: ["get", "--site", "lab"],
    });
    expect(arrangeArgv(["get", "-o", "json"], table)).toMatchObject({ topic: "get" });
    expect(arrangeArgv(["-v", "get", "clusterz"], table)).toMatchObject({
      unknown: "clusterz",
      argv: ["get", "-v", "clusterz"],
    });
    expect(arrangeArgv(["--bogus", "get", "clusters"], table)).toMatchObject({ argv: ["--bogus", "get", "clusters"] });
    expect(arrangeArgv(["-vx", "get"], table).argv).toEqual(["-vx", "get"]);
  });

  test("never drops, adds or reorders anything but global flags moved behind the command's words", () => {
    const token = fc.constantFrom(
      "get",
      "clusters",
      "config",
      "use-site",
      "x",
      "-v",
      "--site",
      "--site=a",
      "lab",
      "-o",
      "--",
      "--json-logs",
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), (argv: string[]) => {
        const { argv: arranged, moved, words } = arrangeArgv(argv, table);
        expect([...arranged].sort()).toEqual([...argv].sort());
        expect(arranged.slice(words, words + moved.length)).toEqual(moved);
        // What stayed keeps its order, and so do the moved flags: both are subsequences of
        // the line as given (a flag's value may equal a command word: `get clusters --site get`).
        const others = arranged.filter((_, i) => i < words || i >= words + moved.length);
        expect(others.length).toBe(argv.length - moved.length);
        expect(isSubsequence(others, argv)).toBe(true);
        expect(isSubsequence(moved, argv)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

test("asksForHelp stops at --", () => {
  expect(asksForHelp(["get", "-h"])).toBe(true);
  expect(asksForHelp(["get", "--", "--help"])).toBe(false);
});

function isSubsequence(part: readonly string[], whole: readonly string[]): boolean {
  let at = 0;
  for (const item of whole) if (at < part.length && part[at] === item) at++;
  return at === part.length;
}
