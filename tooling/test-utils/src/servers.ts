import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
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
