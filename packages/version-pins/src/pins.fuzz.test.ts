import { formatProblem } from "@nodekit/errors";
import { FUZZ_RUNS, fuzzText, problemsAreLocated } from "@nodekit/test-utils";
import fc from "fast-check";
import { dump } from "js-yaml";
import { expect, test } from "vitest";
import { DEFAULT_PINS } from "./defaults.ts";
import { parsePins } from "./parse.ts";

// Issue 9, "done when": 10,000 generated pin sets (the API's JSON, or a local YAML file)
// through the reader, with no crash, no hang, and every problem located.

test(`the pins reader takes ${FUZZ_RUNS} generated pin sets without a crash, each problem located`, () => {
  const valid = [JSON.stringify(DEFAULT_PINS, null, 2), dump(DEFAULT_PINS)];
  let runs = 0;
  fc.assert(
    fc.property(
      fuzzText(valid, ['"version"', "sha256:", "artifacts:", "amd64:", '"url"', "v1.2.3", "tools:"]),
      (text) => {
        runs += 1;
        const { value, problems } = parsePins(text, { source: "pins.json" });
        expect(value === undefined).toBe(problems.length > 0);
        expect(problemsAreLocated(problems, "pins.json", text, formatProblem)).toBe(true);
      },
    ),
    { numRuns: FUZZ_RUNS },
  );
  expect(runs).toBe(FUZZ_RUNS);
}, 300_000);
