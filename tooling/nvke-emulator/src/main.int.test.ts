import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type CreateMachineImageRequest, createNvkeClient } from "@nodekit/nvke-api";
import { tempDir } from "@nodekit/test-utils";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterEach, describe, expect, test } from "vitest";
import { authOff } from "./test-support.ts";

// `pnpm emulator:nvke` as a user runs it: the main script as a process of its own.

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const running: ChildProcess[] = [];

async function startMain(args: string[], env: Record<string, string>): Promise<{ url: string; stateLine: string }> {
  const child = spawn(process.execPath, [main, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line));
  const [url] = (await Promise.race([
    once(createInterface({ input: child.stdout }), "line"),
    once(child, "exit").then(() => {
      throw new Error(`the emulator exited: ${stderr.join("\n")}`);
    }),
  ])) as [string];
  // "state file …" is logged just before the URL is printed.
  const stateLine = stderr.find((line) => line.includes("state file ")) ?? "";
  return { url, stateLine };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}

afterEach(async () => {
  while (running.length > 0) await stop(running.pop());
});

const image: CreateMachineImageRequest = {
  name: "img",
  version: "1.0.0",
  kubernetesVersion: "v1.31.4",
  os: { distribution: "ubuntu", version: "24.04" },
  architecture: "amd64",
  image: `registry.example/img@sha256:${"a".repeat(64)}`,
};

describe("the emulator's state file", () => {
  test("without --state each run starts fresh: a second run never resumes another run's state", async () => {
    const plane = await useControlPlane();
    await authOff(clientsFor(plane.adminKubeconfigPath).core);
    // TMPDIR of the test's own: the old default ($TMPDIR/nvke-emulator/state.json) stays out of the machine's /tmp.
    const tmp = await tempDir("nvke-emulator-main-");
    const env = { TMPDIR: tmp.path };
    const args = ["--kubeconfig", plane.adminKubeconfigPath, "--port", "0"];
    try {
      const first = await startMain(args, env);
      await createNvkeClient({ baseUrl: first.url }).createMachineImage(image);
      await stop(running.pop());

      const second = await startMain(args, env);
      const images = await createNvkeClient({ baseUrl: second.url }).listMachineImagesPage();
      expect(images.items).toEqual([]);
      expect(second.stateLine).toMatch(/state file \S+/);
      expect(second.stateLine).not.toBe(first.stateLine);
    } finally {
      await tmp.cleanup();
    }
  });

  test("with --state a run resumes the state a previous one left", async () => {
    const plane = await useControlPlane();
    const tmp = await tempDir("nvke-emulator-main-");
    const args = ["--kubeconfig", plane.adminKubeconfigPath, "--port", "0", "--state", `${tmp.path}/state.json`];
    try {
      const first = await startMain(args, {});
      await createNvkeClient({ baseUrl: first.url }).createMachineImage(image);
      await stop(running.pop());
      const second = await startMain(args, {});
      const images = await createNvkeClient({ baseUrl: second.url }).listMachineImagesPage();
      expect(images.items.map((item) => item.name)).toEqual(["img"]);
    } finally {
      await tmp.cleanup();
    }
  });
});
