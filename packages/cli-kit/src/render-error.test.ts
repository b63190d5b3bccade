import { BugError, defineErrorCodes, ExitCode, UserError } from "@nodekit/errors";
import { CommandFailedError } from "@nodekit/process";
import { describe, expect, it } from "vitest";
import { describeFailure } from "./render-error.ts";

const context = { bin: "nvkectl", version: "1.2.3" };
const codes = defineErrorCodes("test", {
  SITESPEC_INVALID: { exitCode: ExitCode.InvalidInput, meaning: "the CSV has problems." },
  SITE_NOT_FOUND: { exitCode: ExitCode.NotFound, meaning: "no such site." },
});

describe("describeFailure", () => {
  it("shows a user error's problems, why and next steps with its own exit code", () => {
    const error = new UserError(codes.SITESPEC_INVALID, "hosts.csv has 1 problem; nothing was written", {
      why: "because",
      next: ["fix the row"],
      problems: [{ severity: "error", source: "hosts.csv", line: 3, row: 2, column: "ip", value: "x", message: "bad" }],
    });
    const failure = describeFailure(error, context);
    expect(failure.exitCode).toBe(3);
    expect(failure.message).toBe("hosts.csv has 1 problem; nothing was written");
    expect(failure.details).toEqual(['  hosts.csv:3: row 2, column ip: "x" bad', "why: because", "next: fix the row"]);
    expect(failure.fields).toMatchObject({ code: "SITESPEC_INVALID", exitCode: 3, next: ["fix the row"] });
    expect(failure.stack).toBeUndefined();
  });

  it("adds the CLI's hints for the code after the library's next steps", () => {
    const error = new UserError(codes.SITE_NOT_FOUND, 'site "lab" is not configured', {
      next: "check the name",
      facts: { site: "lab" },
    });
    const failure = describeFailure(error, {
      ...context,
      hints: { SITE_NOT_FOUND: (e) => [`add it with nvkectl config set-site ${e.facts.site}`] },
    });
    expect(failure.details).toEqual(["next: check the name", "next: add it with nvkectl config set-site lab"]);
    expect(failure.fields.next).toEqual(["check the name", "add it with nvkectl config set-site lab"]);
  });

  it("reports a broken invariant as an internal error (exit 70)", () => {
    const failure = describeFailure(new BugError("the plan has no items"), context);
    expect([failure.exitCode, failure.message]).toEqual([70, "internal error: the plan has no items"]);
  });

  it("treats oclif parse errors as usage errors (exit 2)", () => {
    const parseError = Object.assign(new Error("Missing required flag hosts"), { oclif: { exit: 2 } });
    const failure = describeFailure(parseError, context);
    expect(failure.exitCode).toBe(ExitCode.Usage);
    expect(failure.details[0]).toContain("--help");
  });

  it("rewrites oclif's parse errors in the house style: one line, no preamble", () => {
    const required = Object.assign(
      new Error("The following error occurred:\n  Missing required flag kubeconfig\nSee more help with --help"),
      { oclif: { exit: 2 } },
    );
    expect(describeFailure(required, context).message).toBe("missing required flag --kubeconfig");
    // A flag's own parser refusing its value: oclif wraps it as "Parsing --flag", with no exit code.
    const parsed = new Error('Parsing --output \n\t-o "bogus" is not an output format\nSee more help with --help');
    const failure = describeFailure(parsed, context);
    expect([failure.exitCode, failure.message]).toEqual([ExitCode.Usage, '-o "bogus" is not an output format']);
  });

  it("says a missing program is a precondition, and a failed one a failure", () => {
    expect(describeFailure(new CommandFailedError("kind create cluster", undefined, "", true), context).exitCode).toBe(
      ExitCode.Precondition,
    );
    expect(describeFailure(new CommandFailedError("kubectl apply", 1, "boom", false), context).exitCode).toBe(
      ExitCode.CheckFailed,
    );
  });

  it("reports anything else once, as a bug, with the stack kept for -v", () => {
    const failure = describeFailure(new TypeError("x is undefined"), context);
    expect(failure.exitCode).toBe(ExitCode.Internal);
    expect(failure.message).toBe("unexpected failure: x is undefined");
    expect(failure.details[0]).toBe("why: this is a bug in nvkectl 1.2.3, not something you did");
    expect(failure.stack).toContain("TypeError");
  });
});
