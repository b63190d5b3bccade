import { FUZZ_RUNS, fuzzBytes } from "@nodekit/test-utils";
import fc from "fast-check";
import { expect, test } from "vitest";
import { createCluster, createClusterRelease, createMachineImage, createNodePool } from "./controller.ts";
import { emptyState } from "./state.ts";
import { parseState } from "./store.ts";

// Issue 9, "done when": 10,000 generated state files through the emulator's reader: each
// is a state or the refusal naming its problems, never another error (a crash after start).

function sampleState(): string {
  const state = emptyState();
  let ids = 0;
  const ctx = {
    now: 1_700_000_000_000,
    timing: { provisionMs: 1000, deleteMs: 500, nodeMs: 100 },
    controlPlaneController: true,
    clustersNamespace: "nvke-clusters",
    newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, "0")}`,
  };
  const digest = `sha256:${"a".repeat(64)}`;
  createMachineImage(
    state,
    {
      name: "img",
      version: "1.0.0",
      kubernetesVersion: "v1.31.4",
      os: { distribution: "ubuntu", version: "24.04" },
      architecture: "amd64",
      image: `registry.example/img@${digest}`,
    },
    ctx,
  );
  createClusterRelease(
    state,
    {
      name: "r1",
      version: "1.0.0",
      kubernetesVersion: "v1.31.4",
      machineImageName: "img",
      components: [{ name: "kube-apiserver", version: "v1.31.4", image: `registry.example/kas@${digest}` }],
    },
    ctx,
  );
  const cluster = createCluster(
    state,
    {
      name: "c1",
      provider: "nico",
      clusterReleaseName: "r1",
      controlPlaneConfig: { replicas: 1 },
      network: { podCIDR: "10.244.0.0/16", serviceCIDR: "10.96.0.0/12" },
      nico: { instanceType: "mock.small" },
    },
    ctx,
  );
  createNodePool(
    state,
    {
      name: "w",
      nodeNamePrefix: "w",
      desiredNodeCount: 1,
      clusterID: cluster.id,
      nico: { instanceType: "mock.small" },
    },
    ctx,
  );
  return JSON.stringify(state, null, 1);
}

test(`the state file reader takes ${FUZZ_RUNS} generated files without a crash`, () => {
  const valid = [sampleState(), JSON.stringify(emptyState())];
  expect(() => parseState(Buffer.from(valid[0] ?? ""), "state.json")).not.toThrow();
  let runs = 0;
  fc.assert(
    fc.property(
      fuzzBytes(valid, ['"version"', '"clusters"', '"nodePools"', '"cluster"', '"id"', "null", "{}", "[]"]),
      (bytes) => {
        runs += 1;
        try {
          parseState(bytes, "state.json");
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
          expect((error as Error).message).toMatch(
            /^state file state\.json is not an NVKE emulator state file \(version 1\): \d+ problems?; move it aside to start empty\n {2}state\.json/,
          );
        }
      },
    ),
    { numRuns: FUZZ_RUNS },
  );
  expect(runs).toBe(FUZZ_RUNS);
}, 300_000);
