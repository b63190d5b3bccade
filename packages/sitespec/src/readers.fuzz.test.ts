import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatProblem } from "@nodekit/errors";
import { everyFuzzRun, FUZZ_RUNS, fuzzText, problemsAreLocated, repoRoot } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { generateSiteSpec } from "./index.ts";
import { parseSiteSpec } from "./parse-site-spec.ts";

// Issue 9, "done when": at least 10,000 generated inputs through each document reader, with
// no crash (a throw is exit 70 in the CLI), no hang, and every problem located and printable.

const hostsCsv = readFileSync(join(repoRoot, "examples/hosts.csv"), "utf8");
const siteSpec = readFileSync(join(repoRoot, "examples/sitespec.yaml"), "utf8");
const csvTokens = [
  "name",
  "ip",
  "tpm_ek_thumbprint",
  ",",
  '"',
  '""',
  "\n",
  "10.0.0.1",
  "::1",
  "a".repeat(64),
  "node-1",
];

test(`the hosts CSV reader takes ${FUZZ_RUNS} generated files without a crash, each problem located`, async () => {
  await everyFuzzRun(fuzzText([hostsCsv, "name,ip\nnode-1,10.0.0.1\n"], csvTokens), (csvText) => {
    const result = generateSiteSpec({ csvText, source: "hosts.csv", siteName: "lab" });
    expect(result.yaml === undefined).toBe(result.problems.some((p) => p.severity === "error"));
    expect(problemsAreLocated(result.problems, "hosts.csv", csvText, formatProblem)).toBe(true);
  });
}, 300_000);

test(`the site spec reader takes ${FUZZ_RUNS} generated files without a crash, each problem located`, async () => {
  await everyFuzzRun(
    fuzzText([siteSpec], ["hosts:", "agentPort:", "ekThumbprint:", "attestation:", "tpm:"]),
    (text) => {
      const result = parseSiteSpec(text, { source: "sitespec.yaml" });
      expect(result.spec === undefined).toBe(result.problems.length > 0);
      expect(problemsAreLocated(result.problems, "sitespec.yaml", text, formatProblem)).toBe(true);
    },
  );
}, 300_000);
