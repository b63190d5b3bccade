import { spawn, spawnSync } from "node:child_process";
import { access, mkdir, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { type RunningNodeRingsEmulator, startNodeRingsEmulator } from "@nodekit/noderings-emulator";
import {
  type BoundedRun,
  expectBounded,
  FILE_FAULTS,
  repoRoot,
  runBounded,
  STDIN_FAULTS,
  summarize,
  tempDir,
} from "@nodekit/test-utils";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { hostRoot, registerArgv } from "./helpers.ts";

// Issue 22, item 8 and "done when", for nr: its config file and the Proxmox credentials
// (a file, or standard input with -), given inputs no reader may take whole, stop at the
// 8 MiB limit with INPUT_TOO_LARGE (exit 3), in bounded time and memory, before any phase
// runs. Build nr first.

const bin = join(repoRoot, "apps/nr/bin/run.js");
const TOKEN = "nr-input-faults-token";

let emulator: RunningNodeRingsEmulator;
let dir: { path: string; cleanup: () => Promise<void> };
let root: string;
const results: BoundedRun[] = [];

beforeAll(async () => {
  emulator = await startNodeRingsEmulator({ tokens: [TOKEN] });
  dir = await tempDir("nr-input-faults-");
  root = await hostRoot(dir.path);
});

afterAll(async () => {
  const all = summarize(results);
  console.log(`nr input fault tier: ${all.runs} runs, peak RSS ${all.peakRssMb} MB, longest ${all.longestMs} ms`);
  await emulator.stop();
  await dir.cleanup();
});

let homes = 0;
/** A fresh NR_HOME (and HOME) for one run. */
async function freshHome(): Promise<Record<string, string>> {
  homes += 1;
  const home = join(dir.path, `home-${homes}`);
  await mkdir(join(home, ".nr"), { recursive: true, mode: 0o700 });
  return { HOME: home, NR_HOME: join(home, ".nr"), NR_API_TOKEN: TOKEN, PATH: process.env.PATH ?? "" };
}

const register = (...extra: string[]) =>
  registerArgv(emulator.url, root, ["--name", "vm-faults", "--kubeconfig", "/nonexistent", ...extra]);

async function expectNothingRan(env: Record<string, string>) {
  await expect(access(join(env.NR_HOME as string, "state.json"))).rejects.toMatchObject({ code: "ENOENT" });
}

describe("nr's input readers stop at 8 MiB, whatever they are given (issue 22, item 8)", () => {
  describe.each(FILE_FAULTS.map((fault) => [fault.name, fault] as const))("%s", (_name, fault) => {
    test("--proxmox-credentials FILE: exit 3 before any phase", async () => {
      const env = await freshHome();
      const input = await fault.open(dir.path);
      try {
        const run = await runBounded(bin, register("--proxmox-credentials", input.path), {
          env,
          cwd: dir.path,
          dir: dir.path,
        });
        results.push(run);
        expect(run.exitCode, run.stderr).toBe(3);
        expect(run.stderr).toContain(`the Proxmox credentials file ${input.path} is larger than 8 MiB`);
        expectBounded(run, "--proxmox-credentials");
        await expectNothingRan(env);
      } finally {
        input.close();
      }
    });
  });

  test("~/.nr/config.yaml as a 64 GiB file: exit 3 before any phase", async () => {
    const env = await freshHome();
    const config = join(env.NR_HOME as string, "config.yaml");
    const handle = await open(config, "w", 0o600);
    await handle.truncate(64 * 1024 ** 3);
    await handle.close();
    const run = await runBounded(bin, register("--skip-operator-install"), { env, cwd: dir.path, dir: dir.path });
    results.push(run);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toContain(`nr's config ${config} is larger than 8 MiB`);
    expectBounded(run, "config.yaml");
    await expectNothingRan(env);
  });

  // A device or a FIFO in nr's own home: read no further than the limit, or refused as no
  // regular file before it is read (a check of NR_HOME's files may come first); bounded either way.
  test.for([
    ["a device like /dev/zero (mknod c 1 5)", ["mknod", "c", "1", "5"]],
    ["a FIFO fed for ever", ["mkfifo"]],
  ] as const)("~/.nr/config.yaml as %s: stopped or refused, bounded", async ([, make], { skip }) => {
    const env = await freshHome();
    const config = join(env.NR_HOME as string, "config.yaml");
    const [command = "mkfifo", ...rest] = make;
    const made = spawnSync(command, command === "mknod" ? [config, ...rest] : [config]);
    if (made.status !== 0) skip(`${command} failed here: ${made.stderr.toString().trim()}`);
    const writer =
      command === "mkfifo"
        ? spawn("sh", ["-c", 'exec yes "a: b" > "$1"', "sh", config], { stdio: "ignore" })
        : undefined;
    try {
      const run = await runBounded(bin, register("--skip-operator-install"), { env, cwd: dir.path, dir: dir.path });
      results.push(run);
      expect([3, 5, 9], run.stderr).toContain(run.exitCode);
      expectBounded(run, "config.yaml");
      await expectNothingRan(env);
    } finally {
      writer?.kill("SIGKILL");
      await rm(config, { force: true });
    }
  });

  test.each(STDIN_FAULTS.map((fault) => [fault] as const))("--proxmox-credentials - < %s: exit 3", async (fault) => {
    const env = await freshHome();
    const run = await runBounded(bin, register("--proxmox-credentials", "-"), {
      env,
      cwd: dir.path,
      dir: dir.path,
      stdin: fault,
    });
    results.push(run);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toContain("standard input is larger than 8 MiB");
    expectBounded(run, "--proxmox-credentials -");
    await expectNothingRan(env);
  });
});
