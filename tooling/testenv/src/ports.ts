import { readFileSync } from "node:fs";
import { createServer } from "node:net";

// Loopback ports for the daemons a test starts (etcd, kube-apiserver, Flux's controllers, the
// registries): the kernel hands out a free one (freePort), and the daemon binds it a moment
// later. Another process of a busy run can take it in between; the daemon then exits with
// "address already in use", and its start-up tries again on new ports.

/** How many times a start-up picks its ports before a taken port fails it. */
export const PORT_ATTEMPTS = 3;

/** A free TCP port on 127.0.0.1, as the kernel hands one out (someone else may bind it next). */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePromise(port));
    });
  });
}

/**
 * The line of a daemon's log that says a port it was given was taken, among what it wrote from
 * byte `from` on (a retry appends to the same log); undefined when no line says so.
 */
export function portTakenLine(logFile: string, from = 0): string | undefined {
  let text: string;
  try {
    text = readFileSync(logFile).subarray(from).toString("utf8");
  } catch {
    return undefined;
  }
  return text.split("\n").find((line) => line.includes("address already in use"));
}

/**
 * Runs `attempt`, which picks its ports afresh each time, until it succeeds. When it fails and
 * `taken()` finds a port taken (a daemon's log line, from portTakenLine), `retry(line)` stops
 * what the attempt started and it runs again, up to PORT_ATTEMPTS times in all; any other
 * failure, or the last one, is thrown as it is.
 */
export async function onFreePorts<T>(
  attempt: () => Promise<T>,
  taken: () => string | undefined,
  retry: (line: string) => Promise<void>,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const line = taken();
      if (line === undefined || tries >= PORT_ATTEMPTS) throw error;
      await retry(line);
    }
  }
}
