import { access, chmod, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { createExecaRunner } from "@nodekit/process";
import { testdir, userErrorOf } from "@nodekit/test-utils";
import { pinSetHash, type ResolvedPins } from "@nodekit/version-pins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nrPaths } from "./home.ts";
import { installInstaller, installTool, resolveK3sInstaller, resolveTool, sameVersion } from "./tools.ts";

// The companion tools (NR-5) against the emulator's real downloads: small executables
// packaged as upstream packages them, with their real digests, over loopback.

let emulator: Awaited<ReturnType<typeof startNodeRingsEmulator>>;
let pins: ResolvedPins;
const runner = createExecaRunner();

beforeAll(async () => {
  emulator = await startNodeRingsEmulator({ tokens: ["t"] });
  pins = {
    pins: emulator.pins,
    origin: "platform",
    source: emulator.url,
    hash: pinSetHash(emulator.pins),
    warnings: [],
  };
});
afterAll(() => emulator.stop());

async function home() {
  const dir = await testdir({});
  const paths = nrPaths({ NR_HOME: dir.path(".nr") });
  return { dir, paths, env: { PATH: dir.path("empty-path") } };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("companion tools", () => {
  it("downloads a missing tool, checks its digest, installs it into ~/.nr/bin and finds it there next time", async () => {
    const { paths, env } = await home();
    const decision = await resolveTool("helm", { pins, arch: "amd64", paths, runner, env });
    expect(decision).toMatchObject({ action: "install", path: join(paths.bin, "helm"), found: "not found" });
    if (decision.action !== "install") throw new Error("expected an install");
    await installTool(decision, { runner });
    expect(await readdir(paths.bin)).toEqual(["helm"]);
    expect(await resolveTool("helm", { pins, arch: "amd64", paths, runner, env })).toEqual({
      tool: "helm",
      version: "v3.18.6",
      action: "use",
      path: join(paths.bin, "helm"),
    });
  });

  it("uses the tool on PATH when it is the pinned version, and replaces a wrong one", async () => {
    const { dir, paths } = await home();
    await dir.write({ "path/liqoctl": { content: "#!/bin/sh\necho 'Client version: v1.0.1'\n", mode: 0o755 } });
    const env = { PATH: dir.path("path") };
    expect(await resolveTool("liqoctl", { pins, arch: "amd64", paths, runner, env })).toMatchObject({
      action: "use",
      path: dir.path("path/liqoctl"),
    });
    await writeFile(dir.path("path/liqoctl"), "#!/bin/sh\necho 'Client version: v0.10.3'\n");
    await chmod(dir.path("path/liqoctl"), 0o755);
    expect(await resolveTool("liqoctl", { pins, arch: "amd64", paths, runner, env })).toMatchObject({
      action: "install",
      found: `liqoctl v0.10.3 at ${dir.path("path/liqoctl")}`,
    });
  });

  it("a tampered download installs nothing and fails closed", async () => {
    const { paths, env } = await home();
    const decision = await resolveTool("liqoctl", { pins, arch: "amd64", paths, runner, env });
    if (decision.action !== "install") throw new Error("expected an install");
    emulator.artifactFault("tamper", { tool: "liqoctl" });
    const error = await userErrorOf(installTool(decision, { runner }));
    expect(error.code).toBe("DOWNLOAD_DIGEST_MISMATCH");
    expect(error.exitCode).toBe(1);
    expect(await readdir(paths.bin)).toEqual([]);
  });

  it("a truncated download installs nothing", async () => {
    const { paths, env } = await home();
    const decision = await resolveTool("helm", { pins, arch: "arm64", paths, runner, env });
    if (decision.action !== "install") throw new Error("expected an install");
    emulator.artifactFault("truncate", { tool: "helm" });
    const error = await userErrorOf(installTool(decision, { runner }));
    expect(error.code).toBe("DOWNLOAD_TRUNCATED");
    expect(await readdir(paths.bin)).toEqual([]);
  });

  it("a pin without a digest for this architecture is an error before any download", async () => {
    const { paths, env } = await home();
    const edited = structuredClone(emulator.pins);
    delete edited.tools.helm.artifacts?.amd64?.sha256;
    const before = emulator.requests.length;
    const error = await userErrorOf(
      resolveTool("helm", { pins: { ...pins, pins: edited }, arch: "amd64", paths, runner, env }),
    );
    expect(error.code).toBe("PINS_DIGEST_MISSING");
    expect(error.exitCode).toBe(3);
    expect(error.problems[0]?.path).toEqual(["tools", "helm", "artifacts", "amd64", "sha256"]);
    expect(emulator.requests.slice(before).some((r) => r.path.startsWith("/artifacts/"))).toBe(false);
  });

  it("the k3s installer: the operator's own on PATH wins; else the pinned one, downloaded and checked", async () => {
    const { dir, paths, env } = await home();
    const decision = await resolveK3sInstaller({ pins, arch: "amd64", paths, env });
    expect(decision.action).toBe("install");
    if (decision.action !== "install") throw new Error("expected an install");
    await installInstaller(decision);
    expect(await exists(join(paths.bin, "k3s-install.sh"))).toBe(true);
    expect(await resolveK3sInstaller({ pins, arch: "amd64", paths, env })).toMatchObject({
      action: "use",
      from: "~/.nr/bin",
    });
    await dir.write({ "path/k3s-install.sh": { content: "#!/bin/sh\n", mode: 0o755 } });
    expect(await resolveK3sInstaller({ pins, arch: "amd64", paths, env: { PATH: dir.path("path") } })).toMatchObject({
      action: "use",
      from: "PATH",
    });
    const without = structuredClone(emulator.pins);
    delete without.tools["k3s-install"];
    const error = await userErrorOf(
      resolveK3sInstaller({
        pins: { ...pins, pins: without },
        arch: "amd64",
        paths: nrPaths({ NR_HOME: dir.path("other") }),
        env,
      }),
    );
    expect(error.code).toBe("K3S_INSTALLER_MISSING");
  });

  it("compares versions without the v and the build suffix", () => {
    expect(sameVersion("v3.18.6+g4f2a1b", "3.18.6")).toBe(true);
    expect(sameVersion("v3.18.6", "v3.18.7")).toBe(false);
  });
});
