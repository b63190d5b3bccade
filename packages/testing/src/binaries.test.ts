import { testdir } from "@nodekit/test-utils";
import { describe, expect, it } from "vitest";
import { controlPlaneBinaries } from "./index.ts";

const executable = { content: "#!/bin/sh\nexit 0\n", mode: 0o755 };

describe("controlPlaneBinaries", () => {
  it("takes envtest's KUBEBUILDER_ASSETS when it holds kube-apiserver and etcd", async () => {
    const dir = await testdir({ "assets/kube-apiserver": executable, "assets/etcd": executable });
    expect(await controlPlaneBinaries({ env: { KUBEBUILDER_ASSETS: dir.path("assets") } })).toBe(dir.path("assets"));
  });

  it("prefers NODEKIT_TESTENV_BIN_DIR, and says what is missing in it", async () => {
    const dir = await testdir({
      "assets/kube-apiserver": executable,
      "assets/etcd": executable,
      "bin/kube-apiserver": executable,
      "bin/etcd": executable,
      "half/etcd": executable,
    });
    const both = { KUBEBUILDER_ASSETS: dir.path("assets"), NODEKIT_TESTENV_BIN_DIR: dir.path("bin") };
    expect(await controlPlaneBinaries({ env: both })).toBe(dir.path("bin"));
    await expect(controlPlaneBinaries({ env: { NODEKIT_TESTENV_BIN_DIR: dir.path("half") } })).rejects.toThrow(
      /has no executable kube-apiserver/,
    );
  });
});
