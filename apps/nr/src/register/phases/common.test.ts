import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import { createExecaRunner } from "@nodekit/process";
import { testdir } from "@nodekit/test-utils";
import { pinSetHash, type ResolvedPins } from "@nodekit/version-pins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nrPaths } from "../../services/home.ts";
import { resolveTool } from "../../services/tools.ts";
import { check, installToolAction, verdict } from "./common.ts";

let emulator: Awaited<ReturnType<typeof startNodeRingsEmulator>>;
beforeAll(async () => {
  emulator = await startNodeRingsEmulator({ tokens: ["t"] });
});
afterAll(() => emulator.stop());

describe("the install-tool action", () => {
  it("says which tool it installed and records where, from the decision itself (no plan text read back)", async () => {
    const dir = await testdir({});
    const paths = nrPaths({ NR_HOME: dir.path(".nr") });
    const runner = createExecaRunner();
    const pins: ResolvedPins = {
      pins: emulator.pins,
      origin: "platform",
      source: emulator.url,
      hash: pinSetHash(emulator.pins),
      warnings: [],
    };
    const decision = await resolveTool("liqoctl", {
      pins,
      arch: "amd64",
      paths,
      runner,
      env: { PATH: dir.path("none") },
    });
    const installed: string[] = [];
    const recorded: Record<string, string | undefined> = {};
    const io = {
      signal: undefined,
      report: () => {},
      set: (key: "installed", value: string | undefined) => {
        recorded[key] = value;
      },
    };
    const ctx = {
      runner,
      paths,
      transport: undefined,
      onDownload: undefined,
      onInstalled: (tool: string) => installed.push(tool),
    };
    await installToolAction(ctx, decision, io);
    expect(installed).toEqual(["liqoctl"]);
    expect(recorded).toEqual({ installed: join(paths.bin, "liqoctl") });
    expect(await readdir(paths.bin)).toContain("liqoctl");

    // Found at the pinned version next time: nothing installed, nothing said.
    const again = await resolveTool("liqoctl", { pins, arch: "amd64", paths, runner, env: { PATH: dir.path("none") } });
    await installToolAction(ctx, again, io);
    expect(installed).toEqual(["liqoctl"]);
  });
});

describe("checks", () => {
  it("a probe's verdict names every failed check; skipped and passed ones do not fail it", () => {
    expect(verdict([check("a", true), check("b", "skip", "not installed")])).toEqual({ ok: true });
    expect(verdict([check("a", false, "node n is not Ready"), check("b", true), check("c", false)])).toEqual({
      ok: false,
      reason: "a: node n is not Ready; c: failed",
    });
  });
});
