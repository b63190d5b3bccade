import { spawn } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { deadPid } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { leavesLoopback, listensOn, parseSocketTable, socketsOf, watchSockets } from "./sockets.ts";

const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";
const header6 =
  "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";

describe("parseSocketTable", () => {
  test("reads IPv4 entries: addresses in host byte order, ports in hex, state and inode", () => {
    const text = [
      header,
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1682 1 0000000000000000 100 0 0 10 0",
      "   1: 0100007F:D4A2 0500000A:01BB 02 00000001:00000000 01:00000064 00000002     0        0 4242 2 0000000000000000 100 0 0 10 0",
      "",
    ].join("\n");
    expect(parseSocketTable(text, "tcp")).toEqual([
      { protocol: "tcp", local: "127.0.0.1:8080", remote: "0.0.0.0:0", state: "0A", inode: 1682 },
      { protocol: "tcp", local: "127.0.0.1:54434", remote: "10.0.0.5:443", state: "02", inode: 4242 },
    ]);
  });

  test("reads IPv6 entries, IPv4-mapped ones included", () => {
    const text = [
      header6,
      "   0: 00000000000000000000000001000000:0CEA 00000000000000000000000001000000:9C40 01 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 20 4 30 10 -1",
      "   1: 0000000000000000FFFF00000100007F:0CEA 0000000000000000FFFF00000500000A:01BB 02 00000000:00000000 00:00000000 00000000     0        0 78 1 0000000000000000 20 4 30 10 -1",
    ].join("\n");
    const [v6, mapped] = parseSocketTable(text, "tcp6");
    expect(v6).toMatchObject({ local: "[0000:0000:0000:0000:0000:0000:0000:0001]:3306", inode: 77 });
    expect(mapped).toMatchObject({ remote: "[0000:0000:0000:0000:0000:ffff:0a00:0005]:443", state: "02" });
  });
});

describe("leavesLoopback", () => {
  const entry = (protocol: "tcp" | "tcp6", remote: string) => ({ protocol, local: "", remote, state: "01", inode: 1 });

  test("a peer on 127.0.0.0/8 or ::1 stays; no peer (listening, unconnected) stays", () => {
    expect(leavesLoopback(entry("tcp", "127.0.0.1:6443"))).toBe(false);
    expect(leavesLoopback(entry("tcp", "127.9.8.7:1"))).toBe(false);
    expect(leavesLoopback(entry("tcp", "0.0.0.0:0"))).toBe(false);
    expect(leavesLoopback(entry("tcp6", "[0000:0000:0000:0000:0000:0000:0000:0001]:1"))).toBe(false);
    expect(leavesLoopback(entry("tcp6", "[0000:0000:0000:0000:0000:ffff:7f00:0001]:1"))).toBe(false);
    expect(leavesLoopback(entry("tcp6", "[0000:0000:0000:0000:0000:0000:0000:0000]:0"))).toBe(false);
  });

  test("a ClusterIP, a private or a public peer leaves", () => {
    expect(leavesLoopback(entry("tcp", "10.0.0.5:443"))).toBe(true);
    expect(leavesLoopback(entry("tcp", "192.0.2.1:80"))).toBe(true);
    expect(leavesLoopback(entry("tcp6", "[0000:0000:0000:0000:0000:ffff:0a00:0005]:443"))).toBe(true);
    expect(leavesLoopback(entry("tcp6", "[2001:0db8:0000:0000:0000:0000:0000:0001]:443"))).toBe(true);
  });
});

describe.runIf(process.platform === "linux")("socketsOf / watchSockets (Linux /proc)", () => {
  test("finds this process's own loopback connection, and a watch records nothing off loopback", async () => {
    // Given a loopback server and a connection to it from this process
    const server = createServer((socket) => socket.on("error", () => {}));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const watch = await watchSockets(process.pid, { intervalMs: 1 });
    const client: Socket = connect(port, "127.0.0.1");
    await once(client, "connect");

    // When this process's sockets are read
    const sockets = await socketsOf(process.pid);

    // Then the listener and both ends of the connection are there, all on loopback
    expect(sockets).toContainEqual(expect.objectContaining({ local: `127.0.0.1:${port}`, state: "0A" }));
    expect(sockets).toContainEqual(
      expect.objectContaining({ local: `127.0.0.1:${client.localPort}`, remote: `127.0.0.1:${port}`, state: "01" }),
    );
    while (watch.samples < 3) await new Promise((r) => setTimeout(r, 5));
    expect(await watch.stop()).toEqual([]);
    client.destroy();
    server.close();
  });

  test("a watch on a peer address keeps a connection to it that closed between two looks (TIME_WAIT)", async () => {
    // Given a server on 127.0.0.1 and a watch that counts every socket whose peer is 127.0.0.1
    const server = createServer((socket) => socket.on("error", () => {}));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const watch = await watchSockets(process.pid, { peers: ["127.0.0.1"], intervalMs: 60_000 });

    // When a connection opens and closes (this side first) before the watch looks again
    const client = connect(port, "127.0.0.1");
    await once(client, "connect");
    const localPort = client.localPort;
    client.end();
    await once(client, "close");

    // Then the watch's last look still finds it
    expect(await watch.stop()).toContainEqual(
      expect.objectContaining({ local: `127.0.0.1:${localPort}`, remote: `127.0.0.1:${port}` }),
    );
    server.close();
  });
});

describe.runIf(process.platform === "linux")("listensOn (Linux /proc)", () => {
  test("true for the process's own listeners only: not for a port another process holds, nor for a pid that exited", async () => {
    // Given a listener of this process, one of another process, and a pid that has exited
    const server = createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const own = (server.address() as AddressInfo).port;
    const other = spawn(
      process.execPath,
      [
        "-e",
        "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port));",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const [chunk] = (await once(other.stdout, "data")) as [Buffer];
      const theirs = Number(chunk.toString().trim());
      const dead = await deadPid();

      // Then only its own listeners count
      expect(await listensOn(process.pid, [own])).toBe(true);
      expect(await listensOn(process.pid, [own, theirs])).toBe(false);
      expect(await listensOn(other.pid ?? 0, [theirs])).toBe(true);
      expect(await listensOn(dead, [own])).toBe(false);
    } finally {
      other.kill();
      await once(other, "exit").catch(() => undefined);
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
