import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { decodeUtf8 } from "@nodekit/documents";
import { formatProblem } from "@nodekit/errors";
import { everyFuzzRun, FUZZ_RUNS, fuzzBytes, problemsAreLocated, repoRoot } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { parseStackConfig } from "./index.ts";

// Issue 9, "done when": 10,000 generated stack configs through the reader readStackConfig
// uses (bytes → UTF-8 check → YAML → schema → placeholders), with no crash, no hang, and
// every problem and every unfilled placeholder located.

test(`the stack config reader takes ${FUZZ_RUNS} generated files without a crash, each problem located`, async () => {
  const shipped = await readFile(join(repoRoot, "examples/stack.yaml"), "utf8");
  const filled = shipped
    .replace("REPLACE_NICO_API_ENDPOINT", "https://nico.example.net/api")
    .replace("REPLACE_PROFILES_IMAGE", "registry.example.net/nvke/profiles:v1")
    .replace(/REPLACE_[A-Z_]+/g, "filled");
  expect(parseStackConfig(filled, { source: "stack.yaml" }).config).toBeDefined();
  await everyFuzzRun(
    fuzzBytes(
      [shipped, filled, ""],
      ["nico:", "images:", "profiles:", "amd64: ", "clientNetworks: [", "10.0.0.0/8", "REPLACE_X", "apiKeyFromEnv: "],
    ),
    (bytes) => {
      const decoded = decodeUtf8(bytes, { source: "stack.yaml" });
      const text = decoded.text ?? Buffer.from(bytes).toString("latin1");
      const parsed =
        decoded.text === undefined
          ? { config: undefined, problems: decoded.problems, unfilled: [] }
          : parseStackConfig(text, { source: "stack.yaml" });
      expect(parsed.config === undefined).toBe(parsed.problems.length + parsed.unfilled.length > 0);
      expect(problemsAreLocated([...parsed.problems, ...parsed.unfilled], "stack.yaml", text, formatProblem)).toBe(
        true,
      );
    },
  );
}, 300_000);
