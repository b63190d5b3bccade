import { fsSafeErrorCodes } from "@nodekit/fs-safe";
import { nodeRingsErrorCodes } from "@nodekit/noderings-api";
import { phaseRunnerErrorCodes } from "@nodekit/phase-runner";
import { versionPinsErrorCodes } from "@nodekit/version-pins";
import { describe, expect, it } from "vitest";
import { errorCodes } from "./errors.ts";
import { NR_HINTS, type NrHints } from "./hints.ts";

describe("nr's hints", () => {
  it("are keyed by codes of the error tables, so a renamed code cannot leave a hint behind", () => {
    const codes = new Set(
      [errorCodes, phaseRunnerErrorCodes, fsSafeErrorCodes, nodeRingsErrorCodes, versionPinsErrorCodes].flatMap(
        (table) => Object.values(table).map((entry) => entry.code),
      ),
    );
    expect(Object.keys(NR_HINTS).filter((code) => !codes.has(code))).toEqual([]);
    // @ts-expect-error: a code no table has is refused by the typecheck.
    const misspelt: NrHints = { RUN_STATE_EXIST: () => [] };
    expect(Object.keys(misspelt)).toEqual(["RUN_STATE_EXIST"]);
  });
});
