import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { portOpen } from "@nodekit/test-utils";
import { afterAll, describe, expect, test } from "vitest";
import { run } from "./int-helpers.ts";
import { isAlive } from "./supervisor.ts";
import { useControlPlane } from "./vitest.ts";

const cli = fileURLToPath(new URL("./cli.ts", import.meta.url));

function testenv(stateDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [cli, ...args],
      {
        // The owner PID makes the background control plane stop if this test run is interrupted.
        env: { ...process.env, NODEKIT_TESTENV_STATE_DIR: stateDir, NODEKIT_TESTENV_OWNER_PID: String(process.pid) },
        timeout: 120_000,
      },
      (error, stdout, stderr) => resolvePromise({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("pnpm testenv up | kubeconfig | status | down", () => {
  // Each test's scratch dir holds its state dir at <scratch>/state.
  const scratchDirs: string[] = [];
  afterAll(async () => {
    for (const dir of scratchDirs) {
      await testenv(join(dir, "state"), "down");
      await rm(dir, { recursive: true, force: true });
    }
  });
  const newStateDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), "testenv-cli-"));
    scratchDirs.push(dir);
    return join(dir, "state");
  };

  test("runs a control plane in the background and leaves no process, port or file behind", async () => {
    // Given an empty state directory and the binaries this run already uses
    const { binDir } = await useControlPlane();
    const stateDir = await newStateDir();

    // When it is brought up
    const started = await testenv(stateDir, "up", "--bin-dir", binDir);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stderr).toMatch(/ready at https:\/\/127\.0\.0\.1:\d+ in \d+\.\d s/);

    // Then the last stdout line is an admin kubeconfig that works
    const adminKubeconfig = started.stdout.trim().split("\n").at(-1) ?? "";
    expect(existsSync(adminKubeconfig)).toBe(true);
    await run("kubectl", ["--kubeconfig", adminKubeconfig, "get", "namespace", "kube-system"]);

    // And `kubeconfig` mints an identity the server recognises
    const minted = await testenv(stateDir, "kubeconfig", "--user", "dave", "--group", "ops", "--group", "viewers");
    expect(minted.code, minted.stderr).toBe(0);
    const { stdout: whoami } = await run("kubectl", [
      "--kubeconfig",
      minted.stdout.trim(),
      "auth",
      "whoami",
      "--output",
      "json",
    ]);
    expect(JSON.parse(whoami).status.userInfo).toMatchObject({
      username: "dave",
      groups: ["ops", "viewers", "system:authenticated"],
    });

    // And a second `up` reuses the running one
    const again = await testenv(stateDir, "up", "--bin-dir", binDir);
    expect(again.stdout.trim().split("\n").at(-1)).toBe(adminKubeconfig);
    expect(again.stderr).toContain("already running");

    // And `status -o json` reports it
    const status = await testenv(stateDir, "status", "-o", "json");
    expect(status.code).toBe(0);
    const state = JSON.parse(status.stdout);
    expect(state.running).toBe(true);
    const port = Number(new URL(state.info.server).port);
    const pids: number[] = [state.pid, state.pids.etcd, state.pids.kubeApiserver];
    expect(pids.every(isAlive)).toBe(true);

    // When it is brought down
    const stopped = await testenv(stateDir, "down");
    expect(stopped.code, stopped.stderr).toBe(0);

    // Then nothing is left: processes (the supervisor, an orphan, may wait a moment for init
    // to reap it: a zombie holds nothing), the API port, the state directory
    expect(pids.filter(isAlive)).toEqual([]);
    expect(await portOpen(port)).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
    expect((await testenv(stateDir, "status")).code).toBe(3);
  });

  test("kubeconfig without a running control plane says how to start one", async () => {
    const stateDir = await newStateDir();
    const result = await testenv(stateDir, "kubeconfig", "--user", "x");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("testenv is not running");
    expect(result.stderr).toContain("pnpm testenv up");
  });
});
