import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { clientsFor } from "@nodekit/testenv/kube";
import { useControlPlane } from "@nodekit/testenv/vitest";
import { expect, test } from "vitest";
import { authOff, stateFile } from "./test-support.ts";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));

/** `pnpm emulator:nvke` as a user runs it: the wrapper that starts the server under --conditions=source. */
function start(args: string[]): { wrapper: ChildProcess; url: Promise<string> } {
  const wrapper = spawn(process.execPath, [main, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  wrapper.stderr?.resume();
  const url = new Promise<string>((resolve, reject) => {
    let out = "";
    wrapper.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("http://"));
      if (line) resolve(line.trim());
    });
    wrapper.once("exit", (code) => reject(new Error(`the emulator exited with ${code} before printing its URL`)));
  });
  return { wrapper, url };
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

test("kill -9 of the wrapper leaves no server on the port, so it starts again on it (the emulator 16)", async () => {
  const plane = await useControlPlane();
  await authOff(clientsFor(plane.adminKubeconfigPath).core);
  const state = await stateFile();

  const first = start(["--kubeconfig", plane.adminKubeconfigPath, "--state", state, "--port", "0"]);
  const url = await first.url;
  expect(await answers(url)).toBe(true);
  const port = new URL(url).port;

  first.wrapper.kill("SIGKILL");
  const deadline = Date.now() + 15_000;
  while ((await answers(url)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await answers(url)).toBe(false);

  const second = start(["--kubeconfig", plane.adminKubeconfigPath, "--state", state, "--port", port]);
  try {
    expect(await second.url).toBe(url);
    expect(await answers(url)).toBe(true);
  } finally {
    second.wrapper.kill("SIGTERM");
    await new Promise((resolve) => second.wrapper.once("exit", resolve));
  }
  expect(await answers(url)).toBe(false);
});
