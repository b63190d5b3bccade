import { spawnSync } from "node:child_process";
import { connect } from "node:net";

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise<boolean>((resolvePromise) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolvePromise(true);
    });
    socket.once("error", () => resolvePromise(false));
  });
}

/**
 * The files a fresh Node process holds in its CommonJS cache after running `script` (the body
 * of an ES module, workspace packages resolved from source): how a test shows that importing a
 * package leaves a heavy dependency unloaded, and that the call needing it loads it. Throws
 * with the script's stderr when it fails.
 */
export function modulesLoadedAfter(script: string): string[] {
  const result = spawnSync(
    process.execPath,
    [
      "--conditions=source",
      "--input-type=module",
      "-e",
      `${script}\nconsole.log(JSON.stringify(Object.keys((await import("node:module")).createRequire(import.meta.url).cache)))`,
    ],
    { encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`the script exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout) as string[];
}
