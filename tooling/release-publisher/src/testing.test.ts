import { testdir } from "@nodekit/test-utils";
import { afterEach, expect, test } from "vitest";
import { testHelm } from "./testing.ts";

const saved = process.env.NODEKIT_TESTENV_BIN_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.NODEKIT_TESTENV_BIN_DIR;
  else process.env.NODEKIT_TESTENV_BIN_DIR = saved;
});

test("testHelm takes helm from the test runner's binaries (NODEKIT_TESTENV_BIN_DIR), not from an ensure.sh of its own", async () => {
  // Given the runner's Kubernetes binaries in a directory of its choosing
  const executable = { content: "#!/bin/sh\n", mode: 0o755 };
  const runner = await testdir({ "bin/kube-apiserver": executable, "bin/etcd": executable, "bin/helm": executable });
  process.env.NODEKIT_TESTENV_BIN_DIR = runner.path("bin");

  // When a release test asks for helm
  const helm = await testHelm(runner.path("helm-home"));

  // Then it is the runner's, with a HOME of its own
  expect(helm.bin).toBe(runner.path("bin/helm"));
  expect(helm.env.HOME).toBe(runner.path("helm-home"));
});
