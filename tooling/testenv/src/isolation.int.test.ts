import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { portOpen, portPicker, processAlive, squattedPort } from "@nodekit/test-utils";
import { describe, expect, test } from "vitest";
import { startControlPlane } from "./control-plane.ts";
import { clientsFor, ignoring } from "./kube.ts";
import { socketsOf } from "./sockets.ts";
import { dedicatedHolder, useControlPlane } from "./vitest.ts";

// useControlPlane({ dedicated: true }): a file's own kube-apiserver + etcd. What one plane
// holds, another does not; and once stopped, a plane leaves no process, port or directory.

const status = async (call: () => Promise<unknown>) => {
  try {
    await call();
    return 200;
  } catch (error) {
    return (error as { code?: number }).code;
  }
};

describe("a dedicated control plane", () => {
  test("is this file's own: a Node made on it is absent from the shared plane, and the other way round", async () => {
    // Given the run's shared plane and this file's dedicated one
    const shared = await useControlPlane();
    const own = await useControlPlane({ dedicated: true });
    expect(own.server).not.toBe(shared.server);
    expect(own.pids.kubeApiserver).not.toBe(shared.info.pids.kubeApiserver);
    expect(own.caPem).not.toBe(shared.caPem);
    expect((await useControlPlane({ dedicated: true })).server).toBe(own.server); // one per file

    // When each gets a cluster-scoped object of its own
    const suffix = randomBytes(3).toString("hex");
    const onOwn = `isolation-own-${suffix}`;
    const onShared = `isolation-shared-${suffix}`;
    const ownApi = clientsFor(own.adminKubeconfigPath).core;
    const sharedApi = clientsFor(shared.adminKubeconfigPath).core;
    await ownApi.createNode({ body: { metadata: { name: onOwn } } });
    await sharedApi.createNode({ body: { metadata: { name: onShared } } });
    try {
      // Then each plane sees its own only
      expect(await status(() => ownApi.readNode({ name: onOwn }))).toBe(200);
      expect(await status(() => sharedApi.readNode({ name: onOwn }))).toBe(404);
      expect(await status(() => sharedApi.readNode({ name: onShared }))).toBe(200);
      expect(await status(() => ownApi.readNode({ name: onShared }))).toBe(404);
      // and the dedicated plane starts empty of Nodes, whatever files ran before
      expect((await ownApi.listNode()).items.map((node) => node.metadata?.name)).toEqual([onOwn]);
    } finally {
      // (the shared plane outlives this file: leave it as it was)
      await ignoring(404, () => sharedApi.deleteNode({ name: onShared }));
    }
  });

  test("stopping it, as the file's afterAll does, leaves no process, port or directory", async () => {
    // Given a dedicated plane started the way useControlPlane starts one
    const { binDir } = await useControlPlane();
    const holder = dedicatedHolder(() => startControlPlane({ binDir }));
    const plane = await holder.get();
    expect(await holder.get()).toBe(plane);
    const pids = [plane.pids.etcd, plane.pids.kubeApiserver];
    const ports = (await Promise.all(pids.map((pid) => socketsOf(pid))))
      .flat()
      .filter((socket) => socket.state === "0A") // LISTEN
      .map((socket) => Number(socket.local.slice(socket.local.lastIndexOf(":") + 1)));
    expect(ports).toContain(Number(new URL(plane.server).port));
    expect(ports.length).toBeGreaterThanOrEqual(3); // etcd's client and peer ports, kube-apiserver's
    for (const port of ports) expect(await portOpen(port)).toBe(true);
    expect(pids.every(processAlive)).toBe(true);
    expect(existsSync(plane.dataDir)).toBe(true);

    // When it is stopped (twice: the second is a no-op)
    await holder.stop();
    await holder.stop();

    // Then nothing of it is left
    expect(pids.filter(processAlive)).toEqual([]);
    for (const port of ports) expect(await portOpen(port), `port ${port}`).toBe(false);
    expect(existsSync(plane.dataDir)).toBe(false);
    expect(await plane.exited).toMatch(/^(etcd|kube-apiserver)$/);
  });
});

describe("ports", () => {
  test("a port taken before etcd binds it: start-up picks new ports and says so", async () => {
    // Given a port that is handed out while something else already listens on it
    const { binDir } = await useControlPlane();
    const squatter = await squattedPort();
    const taken = squatter.port;
    const picker = portPicker(taken);
    const lines: string[] = [];
    const holder = dedicatedHolder(() =>
      startControlPlane({
        binDir,
        log: (line) => lines.push(line),
        pickPort: picker.pick,
      }),
    );
    try {
      // When a control plane starts with it as etcd's client port
      const plane = await holder.get();

      // Then it started on others, after saying why
      expect(lines.join("\n")).toMatch(/etcd found a port taken \(.*address already in use.*\); trying new ports/);
      expect(picker.picks).toBe(6);
      const { core } = clientsFor(plane.adminKubeconfigPath);
      expect((await core.readNamespace({ name: "default" })).metadata?.name).toBe("default");
      const listening = (await socketsOf(plane.pids.etcd)).filter((socket) => socket.state === "0A");
      expect(listening.map((socket) => socket.local)).not.toContain(`127.0.0.1:${taken}`);
    } finally {
      await holder.stop();
      await squatter.close(); // and what it accepted: the first kube-apiserver dialled it as its etcd
    }
  });
});
