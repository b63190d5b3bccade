import { everyFuzzRun, FUZZ_RUNS, fuzzBytes } from "@nodekit/test-utils";
import { expect, test } from "vitest";
import { createCluster, createNodePool } from "./controller.ts";
import { emptyState } from "./state.ts";
import { parseState } from "./store.ts";
import { clusterRequest, poolRequest, world } from "./test-world.ts";

// Issue 9, "done when": 10,000 generated state files through the emulator's reader: each
// is a state or the refusal naming its problems, never another error (a crash after start).

function sampleState(): string {
  const { state, ctx } = world();
  const cluster = createCluster(state, clusterRequest("c1", { controlPlaneConfig: { replicas: 1 } }), ctx());
  createNodePool(state, poolRequest(cluster.id, "w", 1), ctx());
  return JSON.stringify(state, null, 1);
}

test(`the state file reader takes ${FUZZ_RUNS} generated files without a crash`, async () => {
  const valid = [sampleState(), JSON.stringify(emptyState())];
  expect(() => parseState(Buffer.from(valid[0] ?? ""), "state.json")).not.toThrow();
  await everyFuzzRun(
    fuzzBytes(valid, ['"version"', '"clusters"', '"nodePools"', '"cluster"', '"id"', "null", "{}", "[]"]),
    (bytes) => {
      try {
        parseState(bytes, "state.json");
      } catch (error) {
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(
          /^state file state\.json is not an NVKE emulator state file \(version 1\): \d+ problems?; move it aside to start empty\n {2}state\.json/,
        );
      }
    },
  );
}, 300_000);
