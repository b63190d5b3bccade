import { formatProblem } from "@nodekit/errors";
import { everyFuzzRun, FUZZ_RUNS, fuzzText, problemsAreLocated } from "@nodekit/test-utils";
import { dump } from "js-yaml";
import { expect, test } from "vitest";
import { DEFAULT_PINS } from "./defaults.ts";
import { parsePins } from "./parse.ts";

// Issue 9, "done when": 10,000 generated pin sets (the API's JSON, or a local YAML file)
// through the reader, with no crash, no hang, and every problem located.

test(`the pins reader takes ${FUZZ_RUNS} generated pin sets without a crash, each problem located`, async () => {
  const valid = [JSON.stringify(DEFAULT_PINS, null, 2), dump(DEFAULT_PINS)];
  await everyFuzzRun(
    fuzzText(valid, ['"version"', "sha256:", "artifacts:", "amd64:", '"url"', "v1.2.3", "tools:"]),
    (text) => {
      const { value, problems } = parsePins(text, { source: "pins.json" });
      expect(value === undefined).toBe(problems.length > 0);
      expect(problemsAreLocated(problems, "pins.json", text, formatProblem)).toBe(true);
    },
  );
}, 300_000);
