import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { formatProblem, isUserError, UserError } from "@nodekit/errors";
import {
  CLUSTER_IMMUTABLE_FIELDS,
  CLUSTER_READ_ONLY_FIELDS,
  ClusterPatchSchema,
  CreateClusterRequestSchema,
  CreateNodePoolRequestSchema,
} from "@nodekit/nvke-api";
import {
  everyFuzzRun,
  FUZZ_RUNS,
  fuzzBytes,
  fuzzText,
  problemsAreLocated,
  repoRoot,
  testdir,
} from "@nodekit/test-utils";
import fc from "fast-check";
import { expect, test } from "vitest";
import { errorCodes } from "../errors.ts";
import { singleObject, validateRequest } from "./documents.ts";
import { textOf } from "./files.ts";
import { readPatch, readRequestFile } from "./requests.ts";

// Issue 9, "done when": 10,000 generated request files (read from disk, as `-f` reads them)
// and 10,000 generated merge patches, with no crash: each is a request, or a user error
// whose problems are located and print safely. Anything else would be exit 70.

const example = (name: string) => readFileSync(join(repoRoot, "examples", name), "utf8");
const requestTokens = [
  "name:",
  "provider:",
  "nico:",
  "infra:",
  "machineTemplate:",
  "spec:",
  "controlPlaneConfig:",
  "replicas:",
];
const INPUT_CODES = ["INPUT_INVALID", "INPUT_EMPTY", "INPUT_MULTIPLE_DOCUMENTS"];

function expectUserError(error: unknown, source: string, text: string): void {
  if (!isUserError(error)) throw error;
  expect(INPUT_CODES).toContain(error.code);
  expect(problemsAreLocated(error.problems, source, text, formatProblem)).toBe(true);
}

const requests = [example("capd-cluster.yaml"), example("nico-mock-nodepool.yaml"), JSON.stringify({ name: "a" })];

test(`create requests: ${FUZZ_RUNS} generated files through the -f reader without a crash`, async () => {
  await everyFuzzRun(fc.tuple(fuzzBytes(requests, requestTokens), fc.boolean()), ([bytes, cluster]) => {
    const source = "request.yaml";
    // readRequestFile without the disk: the same decoding, reading and checks, in the same order.
    try {
      const text = textOf(bytes, source, (problems) =>
        Object.assign(new UserError(errorCodes.INPUT_INVALID, "x", { problems })),
      );
      const schema = cluster ? CreateClusterRequestSchema : CreateNodePoolRequestSchema;
      validateRequest(schema, singleObject(text, source, "request"), source);
    } catch (error) {
      expectUserError(error, source, Buffer.from(bytes).toString("latin1"));
    }
  });
}, 300_000);

test("create requests from disk, through readRequestFile itself", async () => {
  const dir = await testdir({});
  const file = dir.path("request.yaml");
  await fc.assert(
    fc.asyncProperty(fuzzBytes(requests, requestTokens), async (bytes) => {
      await writeFile(file, bytes);
      try {
        await readRequestFile(CreateClusterRequestSchema, file, "CreateClusterRequest");
      } catch (error) {
        expectUserError(error, file, Buffer.from(bytes).toString("latin1"));
      }
    }),
    { numRuns: 300 },
  );
}, 300_000);

test(`merge patches: ${FUZZ_RUNS} generated --patch values without a crash`, async () => {
  const patches = ['{"labels": {"team": "a"}}', '{"description": "x", "labels": {"a": null}}', '{"name": "b"}', "{}"];
  await everyFuzzRun(fuzzText(patches, ['"labels"', '"status"', '"id"', "null", '"network"']), async (patch) => {
    try {
      await readPatch({
        schema: ClusterPatchSchema,
        patch,
        immutable: CLUSTER_IMMUTABLE_FIELDS,
        readOnly: CLUSTER_READ_ONLY_FIELDS,
        kind: "cluster",
      });
    } catch (error) {
      expectUserError(error, "--patch", patch);
    }
  });
}, 300_000);
