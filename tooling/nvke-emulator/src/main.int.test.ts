import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type CreateMachineImageRequest, createNvkeClient } from "@nodekit/nvke-api";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { afterEach, describe, expect, test } from "vitest";
import { startEmulator } from "./emulator.ts";
import type { EmulatorState } from "./state.ts";
import { authOff, randomSuffix, stateFile, testDir } from "./test-support.ts";

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

// Before the directories go (test-support's afterAll): one stopped by SIGTERM writes its state once more.
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
    const env = { TMPDIR: await testDir() };
    const args = ["--kubeconfig", plane.adminKubeconfigPath, "--port", "0"];
    const first = await startMain(args, env);
    await createNvkeClient({ baseUrl: first.url }).createMachineImage(image);
    await stop(running.pop());

    const second = await startMain(args, env);
    const images = await createNvkeClient({ baseUrl: second.url }).listMachineImagesPage();
    expect(images.items).toEqual([]);
    expect(second.stateLine).toMatch(/state file \S+/);
    expect(second.stateLine).not.toBe(first.stateLine);
  });

  test("with --state a run resumes the state a previous one left", async () => {
    const plane = await useControlPlane();
    const args = ["--kubeconfig", plane.adminKubeconfigPath, "--port", "0", "--state", await stateFile()];
    const first = await startMain(args, {});
    await createNvkeClient({ baseUrl: first.url }).createMachineImage(image);
    await stop(running.pop());
    const second = await startMain(args, {});
    const images = await createNvkeClient({ baseUrl: second.url }).listMachineImagesPage();
    expect(images.items.map((item) => item.name)).toEqual(["img"]);
  });
});

describe("SIGTERM", () => {
  test("stops it within seconds with a large state, however much background work is due", async () => {
    const plane = await useControlPlane();
    const { core } = clientsFor(plane.adminKubeconfigPath);
    await authOff(core);
    const file = await stateFile();
    const prefix = `sigterm-${randomSuffix()}`;
    // Given a state of 3,000 clusters whose kubeconfig Secrets are all due (seeded, then set back to Provisioning)
    const seeding = await startEmulator({ kubeconfigPath: plane.adminKubeconfigPath, stateFile: file });
    await seeding.seed({ clusters: 3_000, namePrefix: prefix });
    await seeding.stop();
    const state = JSON.parse(await readFile(file, "utf8")) as EmulatorState;
    for (const record of Object.values(state.clusters)) {
      record.kubeconfigSecret = "pending";
      record.cluster.status = { phase: "Provisioning", controlPlaneReady: false };
      delete record.readyMs;
    }
    await writeFile(file, JSON.stringify(state));

    // When the emulator is busy writing those Secrets into the site cluster, and gets SIGTERM
    await startMain(["--kubeconfig", plane.adminKubeconfigPath, "--port", "0", "--state", file], {});
    const child = running.at(-1) as ChildProcess;
    const written = async () =>
      (await core.listNamespacedSecret({ namespace: "nvke-clusters" })).items.filter((secret) =>
        secret.metadata?.name?.startsWith(prefix),
      ).length;
    const sure = Date.now() + 60_000;
    while ((await written()) < 10 && Date.now() < sure) await new Promise((resolve) => setTimeout(resolve, 100));
    const exit = once(child, "exit");
    const signalled = performance.now();
    child.kill("SIGTERM");
    const within = await Promise.race([
      exit.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
    ]);
    if (!within) child.kill("SIGKILL");

    // Then it is gone within 5 s, exit 0, and its state file reads: what was written is recorded, the rest still due
    expect(within, "the emulator ignored SIGTERM for 5 s").toBe(true);
    expect(performance.now() - signalled).toBeLessThan(5_000);
    expect(child.exitCode).toBe(0);
    const after = Object.values((JSON.parse(await readFile(file, "utf8")) as EmulatorState).clusters);
    expect(after).toHaveLength(3_000);
    expect(after.some((record) => record.kubeconfigSecret === "written")).toBe(true);
    expect(after.some((record) => record.kubeconfigSecret === "pending")).toBe(true);
  }, 180_000);
});
