import { describe, expect, it } from "vitest";
import {
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

describe("invalidInput", () => {
  it("counts only errors, keeps only errors, and exits with InvalidInput", () => {
    const error = invalidInput("X_INVALID", "a.csv", [
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
    const error = new UserError("SITE_NOT_FOUND", 'no site named "x"', {
      why: "it was never set",
      next: "run nvkectl config get-sites",
      exitCode: ExitCode.NotFound,
    });
    expect(formatUserError(error)).toBe(
      'error: no site named "x"\nwhy: it was never set\nnext: run nvkectl config get-sites',
    );
  });
});

describe("exit codes", () => {
  it("are unique and all described", () => {
    const values = Object.values(ExitCode);
    expect(new Set(values).size).toBe(values.length);
    expect(Object.keys(exitCodeDescriptions).sort()).toEqual(Object.keys(ExitCode).sort());
  });
});
