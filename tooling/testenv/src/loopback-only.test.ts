import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { testdir } from "@nodekit/test-utils";
import { beforeEach, describe, expect, test } from "vitest";
import { isolationMarker, loopbackOnly, ownInterface } from "./loopback-only.ts";

const run = promisify(execFile);
const isolate = fileURLToPath(new URL("./isolate.ts", import.meta.url));

// Prints the namespace's interfaces, the outcome of a dial off it, and of one to a loopback server.
const probeScript = `
const net = require("node:net");
const os = require("node:os");
const dial = (host, port) => new Promise((done) => {
  const socket = net.connect({ host, port, timeout: 5000 });
  const settle = (outcome) => { socket.destroy(); done(outcome); };
  socket.once("connect", () => settle("connected"));
  socket.once("timeout", () => settle("timed out"));
  socket.once("error", (error) => settle(error.code));
});
const server = net.createServer((socket) => socket.end()).listen(0, "127.0.0.1", async () => {
  const out = {
    interfaces: Object.keys(os.networkInterfaces()).sort(),
    external: Object.values(os.networkInterfaces()).flat().filter((a) => !a.internal).map((a) => a.address),
    offNamespace: await dial("10.0.0.1", 443),
    loopback: await dial("127.0.0.1", server.address().port),
    marker: process.env.${isolationMarker.name} ?? null,
  };
  server.close();
  console.log(JSON.stringify(out));
});
`;

describe("loopbackOnly: how to run a command with only loopback", () => {
  test("is not offered off Linux, and says why", async () => {
    expect(await loopbackOnly({ platform: "darwin" })).toEqual({
      isolated: false,
      reason: "network namespaces are Linux's; this is darwin",
    });
  });

  test.runIf(process.platform === "linux")(
    "is not offered when trying it fails, with the failure's last line",
    async () => {
      const probe = async () => ({ code: 1, stderr: "unshare: unshare failed: Operation not permitted\n" });
      expect(await loopbackOnly({ uid: 1000, gid: 1000, probe })).toEqual({
        isolated: false,
        reason:
          "a user namespace (unshare --user --map-root-user --net) failed: unshare: unshare failed: Operation not permitted",
      });
    },
  );
});

const here = await loopbackOnly();

describe.skipIf(!here.isolated)("inside the namespace (this machine allows one)", () => {
  const prefix = here.isolated ? here.prefix : [];

  test("only loopback (and the namespace's own address) exists; a dial off it fails at once; loopback works", async () => {
    const [file = "", ...args] = prefix;
    const { stdout } = await run(file, [...args, process.execPath, "-e", probeScript]);
    const seen = JSON.parse(stdout) as {
      interfaces: string[];
      external: string[];
      offNamespace: string;
      loopback: string;
    };
    expect(seen.interfaces).toEqual(["lo", ownInterface.name]); // the veth's other end has no address: not listed
    expect(seen.external).toEqual([ownInterface.address]);
    expect(seen.offNamespace).toBe("ENETUNREACH");
    expect(seen.loopback).toBe("connected");
  });

  test("another user's prefix maps them back to their own uid and gid inside", async () => {
    const other = await loopbackOnly({ uid: 65534, gid: 65534 });
    if (!other.isolated) throw new Error(`no user namespace for uid 65534: ${other.reason}`);
    const [file = "", ...args] = other.prefix;
    const { stdout } = await run(file, [...args, "sh", "-c", "id -u; id -g; ls /proc/sys/net/ipv4/conf"]);
    const [uid, gid, ...interfaces] = stdout.trim().split("\n");
    expect({ uid, gid }).toEqual({ uid: "65534", gid: "65534" });
    expect(interfaces.filter((name) => !["all", "default"].includes(name)).sort()).toEqual([
      "lo",
      ownInterface.name,
      `${ownInterface.name}p`,
    ]);
  });
});

describe("isolate.ts: the wrapper `pnpm test` runs vitest through", () => {
  // Set (to directories holding the programs each set needs), so that neither ensure.sh runs.
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    const executable = { content: "#!/bin/sh\n", mode: 0o755 };
    const bin = await testdir(
      Object.fromEntries(["kube-apiserver", "etcd", "registry", "ggcr-registry"].map((name) => [name, executable])),
    );
    env = { ...process.env, NODEKIT_TESTENV_BIN_DIR: bin.root, NODEKIT_REGISTRY_BIN_DIR: bin.root };
  });

  test("passes the command's exit code through", async () => {
    const result = await run(process.execPath, [isolate, "sh", "-c", "exit 7"], { env }).catch((error) => error);
    expect(result.code).toBe(7);
  });

  test("without a command, prints its usage and exits 2", async () => {
    const result = await run(process.execPath, [isolate], { env }).catch((error) => error);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("usage: node tooling/testenv/src/isolate.ts");
  });

  test("runs the command isolated (and marked so) where it can, else says why once on stderr", async () => {
    const { stdout, stderr } = await run(process.execPath, [isolate, process.execPath, "-e", probeScript], { env });
    const seen = JSON.parse(stdout) as { offNamespace: string; marker: string | null; binDir?: string };
    if (here.isolated) {
      expect(seen.marker).toBe(isolationMarker.value);
      expect(seen.offNamespace).toBe("ENETUNREACH");
      expect(stderr).not.toContain("this machine's network");
    } else {
      expect(seen.marker).toBeNull();
      expect(stderr.match(/tests run with this machine's network/g)).toHaveLength(1);
    }
  });
});
