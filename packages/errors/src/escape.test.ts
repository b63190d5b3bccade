import { describe, expect, test } from "vitest";
import { escapeControl, escapeJsonControl } from "./escape.ts";
import { formatProblem } from "./problem.ts";

describe("escapeControl", () => {
  test("shows terminal control sequences as escapes, and leaves other text alone", () => {
    expect(escapeControl("\u001b[2J\u001b]52;c;ZXZpbA==\u0007ok")).toBe("\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07ok");
    expect(escapeControl("\u009b31m \u202eevil \u007f")).toBe("\\x9b31m \\u202eevil \\x7f");
    expect(escapeControl("a\nb\tc")).toBe("a\\nb\\tc");
    expect(escapeControl("a\nb\tc\r", { multiline: true })).toBe("a\nb\tc\\r");
    expect(escapeControl("café — ✓ 日本")).toBe("café — ✓ 日本");
  });

  test("escapeJsonControl keeps the JSON value and hides what JSON.stringify leaves raw", () => {
    const value = { message: "\u009b31m\u202e\u007f\u001b" };
    const json = escapeJsonControl(JSON.stringify(value));
    expect(json).toBe('{"message":"\\u009b31m\\u202e\\u007f\\u001b"}');
    expect(JSON.parse(json)).toEqual(value);
  });
});

test("formatProblem escapes the file name, column, field names and message it got from the input", () => {
  expect(
    formatProblem({
      severity: "warning",
      source: "hosts\u001b[31m.csv",
      line: 1,
      column: "\u001b]0;x\u0007",
      path: ["a\u202eb", 0],
      value: "\u009b",
      message: "is not a known column\u001b[2J",
    }),
  ).toBe('hosts\\x1b[31m.csv:1: column \\x1b]0;x\\x07, field a\\u202eb[0]: "\\u009b" is not a known column\\x1b[2J');
});
