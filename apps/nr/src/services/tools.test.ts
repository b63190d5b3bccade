import { createHash } from "node:crypto";
import { chmod, mkdir, readdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { createExecaRunner } from "@nodekit/process";
import { exists, FUZZ_RUNS, fuzzText, testdir, userErrorOf } from "@nodekit/test-utils";
import { pinSetHash, type ResolvedPins } from "@nodekit/version-pins";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nrPaths } from "./home.ts";
import {
  installInstaller,
  installTool,
  parseInstalledTools,
  resolveK3sInstaller,
  resolveTool,
  sameVersion,
} from "./tools.ts";

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

type ResolveOptions = Parameters<typeof resolveTool>[1];
/** resolveTool as most cases ask it: on amd64, with the emulator's pins (unless given) and this runner. */
const resolve = (
  tool: Parameters<typeof resolveTool>[0],
  options: Pick<ResolveOptions, "paths" | "env"> & Partial<ResolveOptions>,
) => resolveTool(tool, { pins, arch: "amd64", runner, ...options });

async function home() {
  const dir = await testdir({});
  const paths = nrPaths({ NR_HOME: dir.path(".nr") });
  return { dir, paths, env: { PATH: dir.path("empty-path") } };
}

describe("companion tools", () => {
  it("downloads a missing tool, checks its digest, installs it into ~/.nr/bin and finds it there next time", async () => {
    const { paths, env } = await home();
    const decision = await resolve("helm", { paths, env });
    expect(decision).toMatchObject({ action: "install", path: join(paths.bin, "helm"), found: "not found" });
    if (decision.action !== "install") throw new Error("expected an install");
    await installTool(decision, { runner, paths });
    expect(await readdir(paths.bin)).toEqual(["helm"]);
    expect(await resolve("helm", { paths, env })).toEqual({
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
    expect(await resolve("liqoctl", { paths, env })).toMatchObject({
      action: "use",
      path: dir.path("path/liqoctl"),
    });
    await writeFile(dir.path("path/liqoctl"), "#!/bin/sh\necho 'Client version: v0.10.3'\n");
    await chmod(dir.path("path/liqoctl"), 0o755);
    expect(await resolve("liqoctl", { paths, env })).toMatchObject({
      action: "install",
      found: `liqoctl v0.10.3 at ${dir.path("path/liqoctl")}`,
    });
  });

  it.each([
    { fault: "tamper", tool: "liqoctl", arch: "amd64", code: "DOWNLOAD_DIGEST_MISMATCH", exitCode: 1 },
    { fault: "truncate", tool: "helm", arch: "arm64", code: "DOWNLOAD_TRUNCATED", exitCode: 6 },
  ] as const)(
    "a download that fails ($fault) installs nothing and fails closed",
    async ({ fault, tool, arch, code, exitCode }) => {
      const { paths, env } = await home();
      const decision = await resolve(tool, { arch, paths, env });
      if (decision.action !== "install") throw new Error("expected an install");
      emulator.artifactFault(fault, { tool });
      const error = await userErrorOf(installTool(decision, { runner, paths }));
      expect(error.code).toBe(code);
      expect(error.exitCode).toBe(exitCode);
      expect(await readdir(paths.bin)).toEqual([]);
    },
  );

  it("a pin without a digest for this architecture is an error before any download", async () => {
    const { paths, env } = await home();
    const edited = structuredClone(emulator.pins);
    delete edited.tools.helm.artifacts?.amd64?.sha256;
    const before = emulator.requests.length;
    const error = await userErrorOf(resolve("helm", { pins: { ...pins, pins: edited }, paths, env }));
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
    await installInstaller(decision, { paths });
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

  it("a tool in ~/.nr/bin is used only with the digest nr installed it with; a planted one is never run, not even for its version", async () => {
    const { dir, paths, env } = await home();
    const first = await resolve("helm", { paths, env });
    if (first.action !== "install") throw new Error("expected an install");
    await installTool(first, { runner, paths });
    // Given a helm that answers with the pinned version put in its place (a script that leaves a mark when run)
    const marker = dir.path("ran");
    const planted = `#!/bin/sh\ntouch ${marker}\necho v3.18.6\n`;
    await writeFile(join(paths.bin, "helm"), planted);
    await chmod(join(paths.bin, "helm"), 0o755);
    // When nr decides where helm comes from, with ~/.nr/bin on PATH too (as nr advises)
    for (const path of [env.PATH, paths.bin]) {
      const decision = await resolve("helm", { paths, env: { PATH: path } });
      // Then it is not used, and it never ran
      expect(decision).toMatchObject({
        action: "install",
        found: `helm at ${join(paths.bin, "helm")} (not used: its sha256 is not the one nr installed)`,
      });
    }
    expect(await exists(marker)).toBe(false);
    // Nor is one that nr has no record of
    const fresh = await home();
    await mkdir(fresh.paths.bin, { recursive: true });
    await writeFile(join(fresh.paths.bin, "liqoctl"), `#!/bin/sh\ntouch ${marker}\necho 'Client version: v1.0.1'\n`, {
      mode: 0o755,
    });
    expect(await resolve("liqoctl", { paths: fresh.paths, env })).toMatchObject({
      action: "install",
      found: `liqoctl at ${join(fresh.paths.bin, "liqoctl")} (not used: not recorded in ${fresh.paths.tools} as installed by nr)`,
    });
    expect(await exists(marker)).toBe(false);
    // And a link in its place, to the very file nr installed, is not followed
    await installTool({ ...first, path: join(fresh.paths.bin, "helm") }, { runner, paths: fresh.paths });
    await rename(join(fresh.paths.bin, "helm"), dir.path("elsewhere"));
    await symlink(dir.path("elsewhere"), join(fresh.paths.bin, "helm"));
    expect(await resolve("helm", { paths: fresh.paths, env })).toMatchObject({
      action: "install",
      found: `helm at ${join(fresh.paths.bin, "helm")} (not used: ${join(fresh.paths.bin, "helm")} is a symbolic link)`,
    });
  });

  it("the installed tool is kept while the pins name the download it came from, and replaced when they name another", async () => {
    const { paths, env } = await home();
    const first = await resolve("liqoctl", { paths, env });
    if (first.action !== "install") throw new Error("expected an install");
    await installTool(first, { runner, paths });
    const record = JSON.parse(await readFile(paths.tools, "utf8"));
    expect(record.tools.liqoctl).toMatchObject({
      version: "v1.0.1",
      arch: "amd64",
      downloadSha256: first.artifact.sha256,
    });
    const edited = structuredClone(emulator.pins);
    const artifact = edited.tools.liqoctl.artifacts?.amd64;
    if (artifact === undefined) throw new Error("no amd64 liqoctl");
    artifact.sha256 = "0".repeat(64);
    expect(await resolve("liqoctl", { pins: { ...pins, pins: edited }, paths, env })).toMatchObject({
      action: "install",
      found: expect.stringContaining("installed from another download than the pins name"),
    });
  });

  it("a program on PATH that another user could have replaced is not run, not even for its version", async () => {
    const { dir, paths } = await home();
    const marker = dir.path("ran");
    await dir.write({ "shared/helm": { content: `#!/bin/sh\ntouch ${marker}\necho v3.18.6\n`, mode: 0o755 } });
    await chmod(dir.path("shared"), 0o777);
    const decision = await resolve("helm", { paths, env: { PATH: dir.path("shared") } });
    expect(decision).toMatchObject({ action: "install" });
    expect(decision.action === "install" && decision.found).toContain(`helm at ${dir.path("shared/helm")} (not run: `);
    expect(decision.action === "install" && decision.found).toContain("every user may write to it (mode 0777)");
    expect(await exists(marker)).toBe(false);
    await dir.write({ "shared/k3s-install.sh": { content: "#!/bin/sh\n", mode: 0o755 } });
    expect(await resolveK3sInstaller({ pins, arch: "amd64", paths, env: { PATH: dir.path("shared") } })).toMatchObject({
      action: "install",
      passedOver: expect.stringContaining(`${dir.path("shared/k3s-install.sh")} not used: `),
    });
  });

  it("the k3s installer in ~/.nr/bin is used only as a file of one's own, never through a link", async () => {
    const { dir, paths, env } = await home();
    const decision = await resolveK3sInstaller({ pins, arch: "amd64", paths, env });
    if (decision.action !== "install") throw new Error("expected an install");
    await installInstaller(decision, { paths });
    await rename(join(paths.bin, "k3s-install.sh"), dir.path("elsewhere.sh"));
    await symlink(dir.path("elsewhere.sh"), join(paths.bin, "k3s-install.sh"));
    expect(await resolveK3sInstaller({ pins, arch: "amd64", paths, env })).toMatchObject({ action: "install" });
  });

  it("a program built for another architecture is named so: a download is not installed, one on PATH is not used (issue 23, item 10)", async () => {
    const { dir, paths } = await home();
    // An ELF header (64-bit, little-endian) for e_machine 183, AArch64: what linux-arm64 ships.
    const elf = Buffer.alloc(64);
    elf.writeUInt32BE(0x7f454c46, 0);
    elf[4] = 2;
    elf[5] = 1;
    elf[6] = 1;
    elf.writeUInt16LE(2, 16);
    elf.writeUInt16LE(183, 18);
    await mkdir(dir.path("pack"), { recursive: true });
    await writeFile(dir.path("pack/liqoctl"), elf, { mode: 0o755 });
    const { c } = await import("tar");
    await c({ gzip: true, file: dir.path("liqoctl.tar.gz"), cwd: dir.path("pack") }, ["liqoctl"]);
    const archive = await readFile(dir.path("liqoctl.tar.gz"));
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/gzip", "content-length": String(archive.length) });
      res.end(archive);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const wrong = structuredClone(emulator.pins);
      const artifact = wrong.tools.liqoctl.artifacts?.amd64;
      if (artifact === undefined) throw new Error("no amd64 liqoctl");
      artifact.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/liqoctl-linux-amd64.tar.gz`;
      artifact.sha256 = createHash("sha256").update(archive).digest("hex");
      delete artifact.size;
      const env = { PATH: dir.path("empty-path") };
      const decision = await resolve("liqoctl", { pins: { ...pins, pins: wrong }, paths, env });
      if (decision.action !== "install") throw new Error("expected an install");
      const error = await userErrorOf(installTool(decision, { runner, paths }));
      expect(error.code).toBe("TOOL_INSTALL_FAILED");
      expect(error.message).toBe(
        "the downloaded liqoctl is a linux/arm64 program, not linux/amd64: it cannot run on this machine; nothing was installed",
      );
      expect(await readdir(paths.bin)).toEqual([]);
      // The same program on PATH: not run, and named for what it is.
      const onPath = await resolve("liqoctl", { paths, env: { PATH: dir.path("pack") } });
      expect(onPath).toMatchObject({
        action: "install",
        found: `liqoctl at ${dir.path("pack/liqoctl")} (a linux/arm64 program, not linux/amd64)`,
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("Ctrl-C during a download stops it, keeps nothing, and says the run was interrupted", async () => {
    const { paths, env } = await home();
    // A server that sends the start of the file, then nothing more, holding the connection open.
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(4 << 20) });
      res.write(Buffer.alloc(64 << 10));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const slow = structuredClone(emulator.pins);
      const artifact = slow.tools.helm.artifacts?.amd64;
      if (artifact === undefined) throw new Error("no amd64 helm");
      artifact.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/helm.tar.gz`;
      delete artifact.size;
      const decision = await resolve("helm", { pins: { ...pins, pins: slow }, paths, env });
      if (decision.action !== "install") throw new Error("expected an install");
      const controller = new AbortController();
      const error = await userErrorOf(
        installTool(decision, {
          runner,
          paths,
          signal: controller.signal,
          onProgress: (received) => {
            if (received > 0) controller.abort();
          },
        }),
      );
      expect(error.code).toBe("RUN_INTERRUPTED");
      expect(error.exitCode).toBe(130);
      expect(error.message).toBe(
        "interrupted during the download of helm v3.18.6 (amd64); the partial file was removed",
      );
      expect(await readdir(paths.bin)).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it(`fuzz: a tools.json that is not nr's record never throws and records nothing it does not say (${FUZZ_RUNS} inputs)`, async () => {
    const { paths, env } = await home();
    const decision = await resolve("helm", { paths, env });
    if (decision.action !== "install") throw new Error("expected an install");
    await installTool(decision, { runner, paths });
    const valid = await readFile(paths.tools, "utf8");
    expect(Object.keys(parseInstalledTools(valid).tools)).toEqual(["helm"]);
    fc.assert(
      fc.property(fuzzText([valid]), (text) => {
        const helm = parseInstalledTools(text).tools.helm;
        if (helm === undefined) return;
        const said = (JSON.parse(text) as { tools: { helm: { sha256: unknown; downloadSha256: unknown } } }).tools.helm;
        expect([helm.sha256, helm.downloadSha256]).toEqual([said.sha256, said.downloadSha256]);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it("compares versions without the v and the build suffix", () => {
    expect(sameVersion("v3.18.6+g4f2a1b", "3.18.6")).toBe(true);
    expect(sameVersion("v3.18.6", "v3.18.7")).toBe(false);
  });
});
