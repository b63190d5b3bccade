import { describe, expect, it } from "vitest";
import {
  catalogue,
  defineErrorCodes,
  ExitCode,
  exitCodeDescriptions,
  formatPath,
  formatProblem,
  formatUserError,
  hasErrors,
  invalidInput,
  UserError,
} from "./index.ts";

describe("formatProblem", () => {
  it("names the file, line, row, column and value", () => {
    expect(
      formatProblem({
        severity: "error",
        source: "hosts.csv",
        line: 4,
        row: 3,
        column: "ip",
        value: "10.0.0.300",
        message: "is not a valid IPv4 or IPv6 address",
      }),
    ).toBe('hosts.csv:4: row 3, column ip: "10.0.0.300" is not a valid IPv4 or IPv6 address');
  });

  it("names a field path in a structured document", () => {
    expect(
      formatProblem({
        severity: "error",
        source: "stack.yaml",
        path: ["images", "controller"],
        message: "is required",
      }),
    ).toBe("stack.yaml: field images.controller: is required");
    expect(formatPath(["items", 2, "name"])).toBe("items[2].name");
  });
});

const codes = defineErrorCodes("test", {
  X_INVALID: { exitCode: ExitCode.InvalidInput, meaning: "x is invalid." },
  SITE_NOT_FOUND: { exitCode: ExitCode.NotFound, meaning: "no such site." },
});

describe("defineErrorCodes", () => {
  it("gives each code its name, area, exit code and meaning", () => {
    expect(codes.SITE_NOT_FOUND).toEqual({
      code: "SITE_NOT_FOUND",
      area: "test",
      exitCode: ExitCode.NotFound,
      meaning: "no such site.",
    });
  });

  it("refuses a code that is not SCREAMING_SNAKE_CASE or has no meaning", () => {
    expect(() => defineErrorCodes("t", { notACode: { exitCode: 1, meaning: "m" } })).toThrow(/SCREAMING_SNAKE_CASE/);
    expect(() => defineErrorCodes("t", { NO_MEANING: { exitCode: 1, meaning: " " } })).toThrow(/no meaning/);
  });

  it("the catalogue is sorted, and a code two tables define is refused", () => {
    const other = defineErrorCodes("other", { A_CODE: { exitCode: ExitCode.Usage, meaning: "a." } });
    expect(catalogue([codes, other]).map((c) => c.code)).toEqual(["A_CODE", "SITE_NOT_FOUND", "X_INVALID"]);
    const clash = defineErrorCodes("clash", { X_INVALID: { exitCode: ExitCode.Usage, meaning: "again." } });
    expect(() => catalogue([codes, clash])).toThrow("error code X_INVALID is defined by both test and clash");
  });
});

describe("invalidInput", () => {
  it("counts only errors, keeps only errors, and exits with InvalidInput", () => {
    const error = invalidInput(codes.X_INVALID, "a.csv", [
      { severity: "warning", source: "a.csv", message: "w" },
      { severity: "error", source: "a.csv", message: "e" },
    ]);
    expect(error.exitCode).toBe(ExitCode.InvalidInput);
    expect(error.message).toBe("a.csv has 1 problem; nothing was written");
    expect(error.problems).toHaveLength(1);
    expect(hasErrors(error.problems)).toBe(true);
  });
});

describe("UserError", () => {
  it("renders what, why and next", () => {
    const error = new UserError(codes.SITE_NOT_FOUND, 'no site named "x"', {
      why: "it was never set",
      next: "list the sites",
    });
    expect([error.code, error.exitCode]).toEqual(["SITE_NOT_FOUND", ExitCode.NotFound]);
    expect(formatUserError(error)).toBe('error: no site named "x"\nwhy: it was never set\nnext: list the sites');
  });
});

describe("exit codes", () => {
  it("are unique and all described", () => {
    const values = Object.values(ExitCode);
    expect(new Set(values).size).toBe(values.length);
    expect(Object.keys(exitCodeDescriptions).sort()).toEqual(Object.keys(ExitCode).sort());
  });
});
