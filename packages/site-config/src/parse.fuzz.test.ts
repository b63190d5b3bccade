import { decodeUtf8 } from "@nodekit/documents";
import { formatProblem } from "@nodekit/errors";
import { everyFuzzRun, FUZZ_RUNS, fuzzBytes, problemsAreLocated } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { formatConfig, parseConfig } from "./parse.ts";
import { API_VERSION, KIND } from "./rules.ts";

// Issue 9, "done when": 10,000 generated config files through the reader loadConfig uses
// (bytes → UTF-8 check → YAML → schema), with no crash and every problem located.

const valid = formatConfig({
  apiVersion: API_VERSION,
  kind: KIND,
  activeSite: "lab",
  sites: [
    { name: "lab", url: "https://lab.example.com", kubeconfig: "/home/op/lab.kubeconfig" },
    { name: "edge", url: "http://127.0.0.1:30080", kubeconfig: "/home/op/edge.kubeconfig" },
  ],
});

test(`the site configuration reader takes ${FUZZ_RUNS} generated files without a crash, each problem located`, async () => {
  await everyFuzzRun(
    fuzzBytes([valid, ""], ["sites:", "activeSite:", "- name: ", "url: ", "kubeconfig: ", "http://"]),
    (bytes) => {
      const decoded = decodeUtf8(bytes, { source: "config.yaml" });
      // Lines are counted in what was read; bytes that are not UTF-8 are counted one by one.
      const text = decoded.text ?? Buffer.from(bytes).toString("latin1");
      const { config, problems } =
        decoded.text === undefined
          ? { config: undefined, problems: decoded.problems }
          : parseConfig(text, { source: "config.yaml" });
      expect(config === undefined).toBe(problems.length > 0);
      expect(problemsAreLocated(problems, "config.yaml", text, formatProblem)).toBe(true);
    },
  );
}, 300_000);
