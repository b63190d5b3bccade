import type { Server } from "node:http";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { afterEach } from "vitest";

/**
 * Servers on 127.0.0.1 for one test file: `listen(server)` starts one on a free port and gives
 * its URL; after each test every one is closed, its open connections cut.
 */
export function loopbackServers(): { listen(server: Server, scheme?: "http" | "https"): Promise<string> } {
  const open: Server[] = [];
  afterEach(async () => {
    for (const server of open.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  return {
    async listen(server, scheme = "http") {
      open.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}

/**
 * A loopback port another listener holds, accepting connections and keeping them open: the
 * port a start-up picked free and found taken when its daemon came to bind it.
 */
export async function squattedPort(): Promise<{ port: number; close(): Promise<void> }> {
  const squatter = createServer();
  const accepted = new Set<Socket>();
  squatter.on("connection", (socket) => accepted.add(socket));
  await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
  return {
    port: (squatter.address() as AddressInfo).port,
    async close() {
      for (const socket of accepted) socket.destroy(); // whoever dialled it (a daemon's first try)
      await new Promise((resolve) => squatter.close(resolve));
    },
  };
}

/**
 * A `pickPort` for start-ups that pick free ports: pick number `at` (from 0) is `port`, every
 * other one a port the kernel handed out and this freed. `picks` counts them.
 */
export function portPicker(port: number, at = 0): { pick(): Promise<number>; readonly picks: number } {
  let picks = 0;
  const kernelPort = () =>
    new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
  return {
    pick: () => (picks++ === at ? Promise.resolve(port) : kernelPort()),
    get picks() {
      return picks;
    },
  };
}
