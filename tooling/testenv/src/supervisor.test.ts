import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { deadPid, holdingChild, processAlive, tempDir } from "@nodekit/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { isAlive, terminate, waitForExit } from "./supervisor.ts";

const supervisor = new URL("./supervisor.ts", import.meta.url).href;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** `dir` with a `pids` file naming a sleeping process; the sleeper. */
async function guarded() {
  const dir = await tempDir("testenv-watchdog-");
  cleanups.push(dir.cleanup);
  const guardedDir = join(dir.path, "data");
  await mkdir(guardedDir);
  const sleeper = spawn("sleep", ["300"], { stdio: "ignore", detached: true });
  cleanups.push(async () => void (processAlive(sleeper.pid ?? 0) && process.kill(sleeper.pid ?? 0, "SIGKILL")));
  await writeFile(join(guardedDir, "pids"), `${sleeper.pid} sleep\n`);
  return { guardedDir, sleeper };
}

/** A child that starts a watchdog of `dir`, says so, and stays. */
async function watching(dir: string) {
  const started = await holdingChild(`
    import { spawnWatchdog } from ${JSON.stringify(supervisor)};
    spawnWatchdog(${JSON.stringify(dir)}, "test-watchdog");
    process.stdout.write("watching\\n");
    setInterval(() => {}, 60_000);
  `);
  cleanups.push(async () => void started.child.kill("SIGKILL"));
  return started;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/** The pids of a process's children (Linux /proc). */
const childrenOf = (pid: number) =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);

describe("spawnWatchdog", () => {
  it("kill -9 of the process that started it: what `pids` names is stopped and the directory removed", async () => {
    const { guardedDir, sleeper } = await guarded();
    const { child, exited } = await watching(guardedDir);
    child.kill("SIGKILL");
    await exited;
    expect(await until(() => !existsSync(guardedDir), 5_000)).toBe(true);
    expect(await until(() => !processAlive(sleeper.pid ?? 0), 5_000)).toBe(true);
  });

  it("waits without starting a process (no ps, sleep or subshell a second while its starter lives)", async () => {
    const { guardedDir } = await guarded();
    const started = await watching(guardedDir);
    const watchdogPid = Number(execFileSync("pgrep", ["-P", String(started.child.pid)], { encoding: "utf8" }).trim());
    expect(watchdogPid).toBeGreaterThan(0);
    const seen: string[] = [];
    for (let i = 0; i < 15; i++) {
      seen.push(...childrenOf(watchdogPid));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen).toEqual([]);
    expect(existsSync(guardedDir)).toBe(true);
    started.child.kill("SIGKILL");
    await started.exited;
    expect(await until(() => !existsSync(guardedDir), 5_000)).toBe(true);
  });

  it("a starter that exits but is never reaped (a zombie) counts as gone", async () => {
    const { guardedDir } = await guarded();
    // sh starts the node child in the background and then becomes `sleep`, which never reaps:
    // once the child exits it stays a zombie, and still answers signal 0.
    const script = `
      import { spawnWatchdog } from ${JSON.stringify(supervisor)};
      spawnWatchdog(${JSON.stringify(guardedDir)}, "test-watchdog");
      setTimeout(() => process.exit(0), 200);
    `;
    const shell = spawn("sh", ["-c", 'node --input-type=module -e "$1" & exec sleep 30', "sh", script], {
      stdio: "ignore",
      env: { ...process.env, PATH: `${join(process.execPath, "..")}:${process.env.PATH ?? ""}` },
    });
    cleanups.push(async () => void shell.kill("SIGKILL"));
    expect(await until(() => !existsSync(guardedDir), 10_000)).toBe(true);
  });
});

// A process whose parent never reaps it, as the sandbox's detached supervisors are once they
// exit (orphans, adopted by an init that may reap seconds late): `sh` starts `command` in the
// background, prints its pid, and becomes a `sleep` that never waits for it.
const parents: Array<ReturnType<typeof spawn>> = [];
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  // The parent's end hands a zombie to init, which reaps it.
  for (const parent of parents.splice(0)) parent.kill("SIGKILL");
});

async function unreapedChild(command: string): Promise<number> {
  const parent = spawn("sh", ["-c", `${command} & echo $!; exec sleep 60`], { stdio: ["ignore", "pipe", "ignore"] });
  parents.push(parent);
  const line = await new Promise<string>((resolve) =>
    parent.stdout.once("data", (chunk: Buffer) => resolve(`${chunk}`)),
  );
  const pid = Number(line.trim());
  children.push(pid);
  // Until it has become `sleep`, the shell still reaps its children: a child that exits in
  // that window (a test's SIGTERM, on a loaded machine) would be gone, not a zombie.
  while (readFileSync(`/proc/${parent.pid}/comm`, "utf8").trim() !== "sleep") await sleep(10);
  return pid;
}

/** Signal 0 still reaches it: the process exited but is not reaped. */
const answersSignal0 = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("isAlive", () => {
  it("a running process is alive; a reaped one and an unreaped zombie are not", async () => {
    const running = await unreapedChild("sleep 60");
    expect(isAlive(running)).toBe(true);
    expect(isAlive(await deadPid())).toBe(false);

    const zombie = await unreapedChild("sleep 0.1");
    expect(await waitForExit(zombie, 10_000)).toBe(true);
    expect(answersSignal0(zombie)).toBe(true);
    expect(isAlive(zombie)).toBe(false);
  });
});

describe("waitForExit and terminate", () => {
  it("waitForExit returns as soon as the process exited, though nobody reaps it", async () => {
    const zombie = await unreapedChild("sleep 0.2");
    const started = Date.now();

    const exited = await waitForExit(zombie, 20_000);

    expect(exited).toBe(true);
    expect(answersSignal0(zombie)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("terminate does not wait out its grace for a process that exited on SIGTERM but is not reaped", async () => {
    const pid = await unreapedChild("sleep 60");
    const lines: string[] = [];
    const started = Date.now();

    const wasRunning = await terminate(pid, { graceMs: 20_000, what: "the test's sleep", log: (l) => lines.push(l) });

    expect(wasRunning).toBe(true);
    expect(lines).toEqual([]);
    expect(answersSignal0(pid)).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await terminate(pid, { graceMs: 20_000, what: "the test's sleep" })).toBe(false);
  });
});
