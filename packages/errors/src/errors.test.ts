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

  it("the catalogue refuses a code that is not SCREAMING_SNAKE_CASE or has no meaning", () => {
    for (const name of ["notACode", "X__Y", "X_", "_X", "1X", "X-Y", "É"]) {
      const table = defineErrorCodes("t", { [name]: { exitCode: 1, meaning: "m." } });
      expect(() => catalogue([codes, table]), name).toThrow(`error code "${name}" (t) is not SCREAMING_SNAKE_CASE`);
    }
    const empty = defineErrorCodes("t", { NO_MEANING: { exitCode: 1, meaning: " " } });
    expect(() => catalogue([empty])).toThrow("error code NO_MEANING (t) has no meaning");
    expect(catalogue([defineErrorCodes("t", { A1_B2_C: { exitCode: 1, meaning: "m." } })])).toHaveLength(1);
  });

  it("the table and each code in it are frozen", () => {
    expect(Object.isFrozen(codes)).toBe(true);
    expect(Object.isFrozen(codes.X_INVALID)).toBe(true);
    expect(Object.keys(codes)).toEqual(["X_INVALID", "SITE_NOT_FOUND"]);
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
