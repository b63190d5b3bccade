import { describe, expect, test } from "vitest";
import { extractBlocks, outputMatches } from "./blocks.ts";

const md = (...lines: string[]) => `${lines.join("\n")}\n`;

describe("extractBlocks", () => {
  test("run blocks (with their exit code and expected output), syntax blocks and console commands, in order", () => {
    const { blocks, problems } = extractBlocks(
      md(
        "# Guide",
        "",
        "```sh doctest",
        "echo one",
        "```",
        "",
        "```text doctest:output",
        "one",
        "```",
        "",
        "- a list item:",
        "",
        "  ```sh doctest exit=4",
        "  false",
        "  ```",
        "",
        "```sh doctest:syntax",
        "nvkectl get clusters --site lab",
        "```",
        "",
        "```console",
        "$ nvkectl config get-sites",
        "CURRENT   NAME",
        "```",
        "",
        "```yaml",
        "a: 1",
        "```",
      ),
      { source: "guide.md" },
    );
    expect(problems).toEqual([]);
    expect(blocks).toEqual([
      { kind: "run", code: "echo one", line: 3, exitCode: 0, expectedOutput: { lines: ["one"], line: 7 } },
      { kind: "run", code: "false", line: 13, exitCode: 4 },
      { kind: "syntax", code: "nvkectl get clusters --site lab", line: 17, from: "sh" },
      { kind: "syntax", code: "nvkectl config get-sites", line: 21, from: "console" },
    ]);
  });

  test("an unmarked shell block, a stray output block and a bad exit code are problems, each with its line", () => {
    const { problems } = extractBlocks(
      md(
        "```bash",
        "ls",
        "```",
        "",
        "```text doctest:output",
        "x",
        "```",
        "",
        "```sh doctest exit=nope",
        "true",
        "```",
      ),
      { source: "bad.md" },
    );
    expect(problems.map((p) => [p.line, p.message])).toEqual([
      [
        1,
        "a ```bash block must be marked: ```bash doctest (runs against a sandbox) or ```bash doctest:syntax (a real site's commands: syntax only)",
      ],
      [5, "a doctest:output block must follow a ```sh doctest block"],
      [9, "exit=nope is not an exit code (0 to 255)"],
    ]);
  });
});

describe("outputMatches", () => {
  const output = "NAME        ID       PHASE   AGE\ncapd-demo   1234-5   Ready   10s\nNo resources found.\n";
  test("lines in order, … for anything within a line, any run of spaces for a run of spaces", () => {
    expect(outputMatches(output, ["NAME ID PHASE AGE", "capd-demo   …   Ready   …"])).toEqual({ ok: true });
    expect(outputMatches(output, ["No resources found."])).toEqual({ ok: true });
  });
  test("a missing line, or lines out of order, say which line is missing", () => {
    expect(outputMatches(output, ["capd-demo … Failed …"])).toEqual({ ok: false, missing: "capd-demo … Failed …" });
    expect(outputMatches(output, ["No resources found.", "NAME ID PHASE AGE"])).toEqual({
      ok: false,
      missing: "NAME ID PHASE AGE",
    });
    // A whole line must match, not a part of one
    expect(outputMatches(output, ["Ready"])).toEqual({ ok: false, missing: "Ready" });
  });
});
